export { createEmbeddedBus, type EmbeddedBusOptions } from './embedded-bus';
