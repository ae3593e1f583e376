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

export interface SubscribeOptions<T, K extends string = string> {
  topics: K[];
  /** Consumer group: each message is handled by one member of each group. */
  group: string;
  /** Start of a new group: `earliest` (default) or `latest`. */
  from?: 'earliest' | 'latest';
  /** Upper bound of messages handed over at once. */
  maxBatch?: number;
  /**
   * Upper bound of a batch's size, as the sum of its messages' stored JSON text (bytes on Kafka, characters on
   * the embedded bus), so a batch of large messages stays bounded in memory while small ones still come
   * `maxBatch` at a time. A message larger than the bound comes alone. Absent: `maxBatch` alone bounds it.
   */
  maxBatchBytes?: number;
  /**
   * How long the oldest message of a batch may wait for others to join it: the batch is handed over when it is
   * full (`maxBatch`) or its oldest message has waited this long. For a consumer whose cost is mostly per batch
   * (a few store writes whatever its size), fewer and larger batches. 0 or absent: handed over at once.
   */
  fetchWaitMs?: number;
  /**
   * A group only this subscription ever uses (its name made fresh for it, as an instance that must see every
   * message itself): its position is of no use once it stops, and kept would hold back what the embedded bus
   * trims. The embedded bus deletes it when the subscription stops, or once its member has been gone for the
   * grace (a crash); Kafka expires such a group's offsets by the broker's `offsets.retention.minutes`.
   */
  ephemeral?: boolean;
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
  /**
   * Messages published to each of `topics` that `group` has not committed yet (its lag), for the topics the
   * group has started on. Optional: a bus that cannot tell leaves it out.
   */
  consumerLag?(group: string, topics: string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** Topic name -> the message type published on it. */
export type TopicMap = Record<string, unknown>;
/** The topics of a map, as names. */
export type TopicOf<M extends object> = keyof M & string;

/**
 * A bus narrowed to a topic map (the gateway's is `TopicMessages` in @gw/proto): each topic takes and yields
 * only its message type, so `publish(TOPICS.usage, ...)` accepts usage events alone. Any `Bus` is one.
 */
export interface TypedBus<M extends object> extends Omit<Bus, 'publish' | 'subscribe'> {
  publish<K extends TopicOf<M>>(topic: K, messages: OutgoingMessage<M[K]>[]): Promise<void>;
  subscribe<K extends TopicOf<M>>(opts: SubscribeOptions<M[K], K>): Promise<Subscription>;
}
