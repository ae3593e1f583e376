/**
 * The bus port: durable topics with consumer groups. Delivery is at-least-once: a batch is committed only
 * after its handler resolves; a handler that throws (or a process that dies mid-handler) gets the same
 * messages again. Messages with the same key are delivered in publish order.
 */

export interface OutgoingMessage<T = unknown> {
  /** Partitioning key: messages with one key keep their order. */
  key: string;
  value: T;
}

export interface BusMessage<T = unknown> {
  topic: string;
  key: string;
  value: T;
  /** Engine position, opaque to callers; increasing within one partition. */
  offset: string;
  partition: number;
}

export interface SubscribeOptions<T> {
  topics: string[];
  /** Consumer group: each message is handled by one member of each group. */
  group: string;
  /** Start of a new group: `earliest` (default) or `latest`. */
  from?: 'earliest' | 'latest';
  /** Upper bound of messages handed over at once. */
  maxBatch?: number;
  /** Handles a batch; resolve to commit it, throw to have it redelivered. */
  handleBatch(messages: BusMessage<T>[]): Promise<void>;
}

export interface Subscription {
  /** Stops fetching, lets the running handler finish, and leaves the group. */
  stop(): Promise<void>;
}

export interface Bus {
  /** Engine name: `embedded` or `kafka`. */
  readonly engine: string;
  /** Durably appends messages (resolves once the engine has them) or throws. */
  publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void>;
  subscribe<T>(opts: SubscribeOptions<T>): Promise<Subscription>;
  /** True when the engine is reachable; used by readiness. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
