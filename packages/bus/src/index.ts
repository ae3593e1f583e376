export * from './port';
export { createBus, type BusConfig } from './create-bus';
export { createEmbeddedBus, type EmbeddedBusOptions } from './embedded';
export type { KafkaBusOptions } from './kafka';
export { createOutbox, OUTBOX_COLLECTION, type Outbox, type OutboxOptions } from './outbox';
export { BatchingPublisher, createBatchingPublisher, type BatchingPublisherOptions, type TypedPublisher } from './batching-publisher';
export { namespacedBus } from './namespaced-bus';
export { subscribeInBackground, type BackgroundSubscription } from './background-subscription';
