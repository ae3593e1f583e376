import type { Logger } from '@gw/platform';
import type { OutgoingMessage, TopicOf } from './port';
import type { Outbox } from './outbox';
import { Backoff } from './internal/async';

export interface BatchingPublisherOptions {
  outbox: Pick<Outbox, 'publish'>;
  logger: Logger;
  /** How long an event may wait for company before its batch leaves. */
  lingerMs?: number;
  /** A topic's batch leaves at once when it reaches this size. */
  maxBatch?: number;
  /**
   * With `sizeOf`: one publish carries at most this many bytes (as `sizeOf` counts them), so large events
   * stay under a broker's message budget while small ones still travel many to a publish.
   */
  maxBatchBytes?: number;
  sizeOf?: (message: OutgoingMessage) => number;
}

/** A publisher narrowed to a topic map (see TypedBus): each topic takes only its message type. Any BatchingPublisher is one. */
export interface TypedPublisher<M extends object> {
  enqueue<K extends TopicOf<M>>(topic: K, message: OutgoingMessage<M[K]>): void;
  flush(): Promise<void>;
  whenSent(): Promise<void>;
}

/**
 * Collects events off the caller's path and sends them through the outbox in one publish per topic, so a
 * burst of calls costs one bus write (or one outbox write) instead of one per event. Batches leave in
 * enqueue order, one flush at a time.
 */
export class BatchingPublisher {
  private buffers = new Map<string, OutgoingMessage[]>();
  /** Bytes buffered per topic since the last send (with a byte budget): when to flush early. */
  private bufferedBytes = new Map<string, number>();
  private buffered = 0;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** The flush queued behind the one running, if any. */
  private waiting: Promise<void> | null = null;
  /** Callers of `whenSent` waiting for the next flush to start (and to settle). */
  private sentWaiters: { resolve(): void; reject(err: unknown): void }[] = [];
  private closed = false;
  private readonly backoff = new Backoff(100, 5_000);
  private readonly lingerMs: number;
  private readonly maxBatch: number;
  private readonly logger: Logger;

  constructor(private readonly opts: BatchingPublisherOptions) {
    this.lingerMs = opts.lingerMs ?? 5;
    this.maxBatch = opts.maxBatch ?? 500;
    this.logger = opts.logger.child({ component: 'batching-publisher' });
  }

  /** Buffers one event; never blocks and never throws unless the publisher is closed. */
  enqueue<T>(topic: string, message: OutgoingMessage<T>): void {
    if (this.closed) throw new Error('batching publisher is closed');
    let buffer = this.buffers.get(topic);
    if (!buffer) this.buffers.set(topic, (buffer = []));
    buffer.push(message);
    this.buffered++;
    if (buffer.length >= this.maxBatch || this.fillsBudget(topic, message)) void this.flush().catch(() => undefined);
    else this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.lingerMs);
  }

  /** Number of events not yet handed to the outbox. */
  get size(): number {
    return this.buffered;
  }

  /**
   * Sends everything buffered so far; rejects if the outbox refused (the events stay buffered for a retry).
   * A flush asked for while another waits to start is that one (it sends what is buffered when it starts),
   * so a burst waiting on a slow outbox queues one flush, not one per full batch.
   */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting) return this.waiting;
    const next = this.chain.then(() => {
      this.waiting = null;
      return this.sendBuffered();
    });
    this.waiting = next;
    this.chain = next.catch(() => undefined);
    // It sends everything buffered when it starts: all that `whenSent` callers are waiting for.
    for (const w of this.sentWaiters.splice(0)) next.then(w.resolve, w.reject);
    return next;
  }

  /**
   * Resolves once everything buffered so far is in the outbox, without sending it early: the flush that sends it
   * is the linger timer's (or any earlier one). Rejects as that flush does (the events stay buffered for a retry).
   * For callers that need durability but not promptness, so their events still travel many to a publish.
   */
  whenSent(): Promise<void> {
    if (this.buffered === 0) return this.chain;
    if (this.waiting) return this.waiting;
    return new Promise<void>((resolve, reject) => this.sentWaiters.push({ resolve, reject }));
  }

  /** Drains every buffered event (graceful shutdown); further enqueues throw. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private async sendBuffered(): Promise<void> {
    const batches = this.buffers;
    this.buffers = new Map();
    this.bufferedBytes = new Map();
    for (const [topic, messages] of batches) {
      for (let i = 0; i < messages.length;) {
        const slice = messages.slice(i, this.sliceEnd(messages, i));
        try {
          await this.opts.outbox.publish(topic, slice);
          this.buffered -= slice.length;
          i += slice.length;
        } catch (err) {
          this.requeue(topic, messages.slice(i), batches, err);
          throw err;
        }
      }
      batches.delete(topic);
    }
    this.backoff.reset();
  }

  /** Where the publish starting at `from` ends: at `maxBatch` events, or earlier where the byte budget is spent (never empty). */
  private sliceEnd(messages: OutgoingMessage[], from: number): number {
    const end = Math.min(messages.length, from + this.maxBatch);
    const { maxBatchBytes, sizeOf } = this.opts;
    if (!maxBatchBytes || !sizeOf) return end;
    let bytes = sizeOf(messages[from]);
    let i = from + 1;
    for (; i < end; i++) {
      bytes += sizeOf(messages[i]);
      if (bytes > maxBatchBytes) break;
    }
    return i;
  }

  /** Counts the event against its topic's byte budget; true once a publish's worth is buffered. */
  private fillsBudget(topic: string, message: OutgoingMessage): boolean {
    const { maxBatchBytes, sizeOf } = this.opts;
    if (!maxBatchBytes || !sizeOf) return false;
    const bytes = (this.bufferedBytes.get(topic) ?? 0) + sizeOf(message);
    this.bufferedBytes.set(topic, bytes);
    return bytes >= maxBatchBytes;
  }

  /** Puts unsent events back in front of anything enqueued meanwhile, and schedules a retry. */
  private requeue(failedTopic: string, unsent: OutgoingMessage[], rest: Map<string, OutgoingMessage[]>, err: unknown): void {
    const merged = new Map<string, OutgoingMessage[]>();
    merged.set(failedTopic, unsent);
    for (const [topic, messages] of rest) if (topic !== failedTopic) merged.set(topic, messages);
    for (const [topic, messages] of this.buffers) merged.set(topic, [...(merged.get(topic) ?? []), ...messages]);
    this.buffers = merged;
    const delay = this.backoff.next();
    this.logger.error({ err, topic: failedTopic, pending: this.buffered, retryInMs: delay }, 'outbox refused events; will retry');
    if (!this.closed) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.flush().catch(() => undefined), delay);
    }
  }
}

export function createBatchingPublisher(opts: BatchingPublisherOptions): BatchingPublisher {
  return new BatchingPublisher(opts);
}
