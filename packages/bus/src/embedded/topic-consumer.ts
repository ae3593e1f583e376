import type { EventEmitter } from 'node:events';
import type { Logger } from '@gw/platform';
import type { LogEntry } from '@gw/store';
import type { BusMessage } from '../port';
import { Backoff, sleep } from '../internal/async';
import type { GroupLease } from './group-lease';
import type { TopicLogs } from './topic-log';
import { Waiter } from './wakeups';

export interface TopicConsumerTimings {
  /** Fallback poll when nothing woke us (another process published, a lease expired). */
  pollMs: number;
  leaseMs: number;
  /** How long a missing sequence may stay missing (a publisher still writing it) before it is skipped. */
  gapGraceMs: number;
  /**
   * How long a handled offset may wait before it is committed, so a busy consumer writes its position a few
   * times a second rather than after every batch; 0 commits after each. A crash redelivers at most this much,
   * as any at-least-once consumer must expect.
   */
  commitIntervalMs: number;
}

/** What one batch may hold: see SubscribeOptions. */
export interface TopicConsumerBatching {
  maxBatch: number;
  /** Characters of the entries' values (their JSON text); Infinity for no bound. */
  maxBatchChars: number;
  fetchWaitMs: number;
}

/** How soon to look again while waiting for a missing sequence to appear. */
const GAP_RECHECK_MS = 25;

/**
 * One group member's loop over one topic: hold the group's lease, read entries after the committed offset,
 * hand them over, commit after success (within `commitIntervalMs`). A throw or a crash leaves the committed
 * offset where it was, so the same entries come again.
 */
export class TopicConsumer<T> {
  private stopped = false;
  private readonly stopping = new AbortController();
  private owned = false;
  private offset = 0;
  private gapSince: number | null = null;
  private readonly waiter = new Waiter();
  private readonly backoff = new Backoff();
  private renewTimer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  /** Handled through this sequence, not yet committed. */
  private handled: number | null = null;
  private commitTimer: NodeJS.Timeout | undefined;
  private committing: Promise<void> | null = null;

  constructor(
    private readonly topic: string,
    private readonly logs: TopicLogs,
    private readonly lease: GroupLease,
    private readonly events: EventEmitter,
    private readonly handle: (messages: BusMessage<T>[]) => Promise<void>,
    private readonly batching: TopicConsumerBatching,
    private readonly timings: TopicConsumerTimings,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.events.on(this.topic, this.waiter.wake);
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.timings.leaseMs / 3)));
    this.renewTimer.unref();
    this.loop = this.run();
  }

  /** Lets the running handler finish and its commit land, then gives the lease up for the next member. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.waiter.wake();
    await this.loop;
    this.events.off(this.topic, this.waiter.wake);
    clearTimeout(this.commitTimer);
    await this.commitHandled();
    clearInterval(this.renewTimer);
    if (this.owned) {
      this.owned = false;
      await this.lease.release().catch((err) => this.logger.warn({ err }, 'bus could not release its lease; it will expire'));
      this.events.emit(this.topic);
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        if (!this.owned && !(await this.acquire())) {
          await this.waiter.wait(Math.min(this.timings.pollMs, Math.max(50, this.timings.leaseMs / 4)));
          continue;
        }
        let batch = await this.nextBatch();
        if (this.stopped) break;
        if (batch.length === 0) {
          await this.waiter.wait(this.gapSince !== null ? GAP_RECHECK_MS : this.timings.pollMs);
          continue;
        }
        const { maxBatch, maxBatchChars, fetchWaitMs } = this.batching;
        const joinBy = batch[0].publishedAt + fetchWaitMs;
        const chars = charsOf(batch);
        if (batch.length < maxBatch && chars < maxBatchChars && joinBy > Date.now()) {
          // Bounded: another process's clock may run ahead of this one's.
          await sleep(Math.min(joinBy - Date.now(), fetchWaitMs), this.stopping.signal);
          if (this.stopped) break;
          const more = await this.following(batch[batch.length - 1].seq, maxBatch - batch.length, maxBatchChars - chars);
          // The budget's first-entry rule is for a batch's first entry only: one that would cross it waits.
          if (charsOf(more.slice(0, 1)) + chars <= maxBatchChars) batch = batch.concat(more);
        }
        await this.deliver(batch);
      } catch (err) {
        const delay = this.backoff.next();
        this.logger.warn({ err, retryInMs: delay }, 'bus consumer step failed');
        await sleep(delay, this.stopping.signal);
      }
    }
  }

  private async acquire(): Promise<boolean> {
    const offset = await this.lease.claim();
    if (offset === null) return false;
    this.owned = true;
    this.offset = offset;
    this.gapSince = null;
    return true;
  }

  private async renew(): Promise<void> {
    if (!this.owned || this.stopped) return;
    try {
      if (!(await this.lease.renew())) this.loseLease();
    } catch (err) {
      this.logger.warn({ err }, 'bus lease renewal failed');
    }
  }

  private loseLease(): void {
    if (this.owned) this.logger.warn('bus consumer lost its lease; another member took over');
    this.owned = false;
    // The new owner starts from the committed offset; what this member handled since comes again there.
    this.handled = null;
  }

  /** Commits the handled offset now (one commit at a time); a failed commit is retried after the interval. */
  private async commitHandled(): Promise<void> {
    while (this.committing) await this.committing;
    const offset = this.handled;
    if (offset === null || !this.owned) return;
    this.handled = null;
    this.committing = (async () => {
      try {
        if (!(await this.lease.commit(offset))) this.loseLease();
      } catch (err) {
        this.logger.warn({ err, offset }, 'bus commit failed; retrying');
        if (this.owned) this.markHandled(Math.max(offset, this.handled ?? 0));
      }
    })().finally(() => (this.committing = null));
    await this.committing;
  }

  private markHandled(offset: number): void {
    this.handled = offset;
    if (this.commitTimer) return;
    this.commitTimer = setTimeout(() => {
      this.commitTimer = undefined;
      void this.commitHandled();
    }, this.timings.commitIntervalMs);
    // Never what keeps a process alive: stop() commits what was handled.
    this.commitTimer.unref();
  }

  private async deliver(entries: LogEntry[]): Promise<void> {
    const messages = entries.flatMap((e) => this.decode(e));
    if (messages.length > 0) {
      try {
        await this.handle(messages);
      } catch (err) {
        const delay = this.backoff.next();
        this.logger.warn({ err, offset: entries[0].seq, retryInMs: delay }, 'bus handler failed; batch will be redelivered');
        await sleep(delay, this.stopping.signal);
        return;
      }
    }
    this.backoff.reset();
    this.offset = entries[entries.length - 1].seq;
    if (this.timings.commitIntervalMs > 0) this.markHandled(this.offset);
    else {
      this.handled = this.offset;
      await this.commitHandled();
    }
  }

  /** The entries that directly follow the offset; stops at a gap, which is waited out for `gapGraceMs`. */
  private async nextBatch(): Promise<LogEntry[]> {
    const entries = await this.logs.read(this.topic, this.offset, this.batching.maxBatch, this.batching.maxBatchChars);
    if (entries.length === 0) return [];
    const first = entries[0].seq;
    if (first !== this.offset + 1) {
      const trimmedThrough = (await this.logs.meta(this.topic))?.trimmedThrough ?? 0;
      if (trimmedThrough > this.offset) {
        this.logger.warn({ from: this.offset + 1, to: trimmedThrough }, 'bus retention deleted entries this group had not committed');
      }
      if (first !== Math.max(this.offset, trimmedThrough) + 1) {
        const now = Date.now();
        this.gapSince ??= now;
        if (now - this.gapSince < this.timings.gapGraceMs) return [];
        this.logger.warn({ from: this.offset + 1, to: first - 1 }, 'bus skips sequences that never appeared (a publisher failed mid-append)');
      }
    }
    this.gapSince = null;
    return contiguousAfter(first - 1, entries);
  }

  /** Up to `limit` entries (within `maxChars`) directly after `seq`, up to the first gap (the next batch waits gaps out). */
  private async following(seq: number, limit: number, maxChars: number): Promise<LogEntry[]> {
    return contiguousAfter(seq, await this.logs.read(this.topic, seq, limit, maxChars));
  }

  private decode(e: LogEntry): BusMessage<T>[] {
    try {
      return [{ topic: this.topic, partition: 0, offset: String(e.seq), key: e.key, value: JSON.parse(e.value) as T }];
    } catch (err) {
      this.logger.error({ err, offset: e.seq }, 'bus entry is not JSON; skipped');
      return [];
    }
  }
}

function charsOf(entries: LogEntry[]): number {
  return entries.reduce((n, e) => n + e.value.length, 0);
}

/** The leading entries whose sequences follow `after` one by one, up to the first gap. */
function contiguousAfter(after: number, entries: LogEntry[]): LogEntry[] {
  let end = 0;
  while (end < entries.length && entries[end].seq === after + end + 1) end++;
  return entries.slice(0, end);
}
