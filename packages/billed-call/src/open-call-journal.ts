import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { TypedPublisher } from '@gw/bus';
import type { Logger } from '@gw/platform';
import { TOPICS, type TopicMessages, type UsageEvent } from '@gw/proto';
import type { Collection, Doc, Store } from '@gw/store';
import type { CallHold } from './billed-call';
import { estimatedTokens, estimatedUsageEvent } from './recovered-usage';

export const OPEN_CALLS_COLLECTION = 'open_calls';

/** The usage a line measures itself as it streams (seconds of audio, images), in the usage event's shape. */
export type MeasuredUsage = NonNullable<UsageEvent['usage']>;

/** The journal's settings, the same in every service that streams (config through each service's schema). */
export const openCallJournalEnv = {
  /**
   * Open-call journal: a stream's entry is leased by its instance and renewed every third of this; once it has
   * lapsed this long (the instance died), any instance bills the stream with the usage of its last checkpoint.
   */
  OPEN_CALL_LEASE_MS: z.coerce.number().int().positive().default(15_000),
  /** A stream's progress (generated text, measured usage so far) is written at most once per this interval. */
  OPEN_CALL_CHECKPOINT_MS: z.coerce.number().int().positive().default(1_000),
  /** How often each instance looks for lapsed open calls to bill. */
  OPEN_CALL_SWEEP_MS: z.coerce.number().int().positive().default(5_000),
};

/**
 * A streamed call under way, written when its request goes to the provider (so before any byte reaches the
 * client). Its owner renews the lease while it lives; an entry whose lease lapsed belongs to a dead instance,
 * and any instance bills it.
 */
export interface OpenCallDoc extends Doc {
  /** `_id` is the platform request id, so the recovered usage event is deduplicated by billing like any other. */
  owner: string;
  lease_until_ms: number;
  account_id: string;
  key_hash: string;
  model: string;
  provider: string;
  deployment: string;
  api_type: string;
  started_at_ms: number;
  /** When the request went to the provider (the last deployment tried). */
  sent_at_ms: number;
  prompt_tokens_estimate: number;
  /** Generated text seen so far, as of the last checkpoint. */
  output_chars: number;
  provider_response_id: string;
  served_model: string;
  checkpoint_at_ms: number;
  /**
   * Usage the line measured as of the last checkpoint (media: seconds of audio sent, images stored); billed as it
   * is when present. Absent (text streams): tokens are estimated from `prompt_tokens_estimate` and `output_chars`.
   */
  usage?: MeasuredUsage;
  /** The gateway's ids of what the stream produced so far (image records), for the billing lookup. */
  media_ids?: string[];
  /** The spend grant the call runs under and its share (absent: its hold, if any, is its own). */
  hold_id?: string;
  hold_micros?: number;
  /** The request's trace id, for the recovered usage event's billing record. */
  trace_id?: string;
}

export interface OpenCallStart {
  requestId: string;
  traceId: string;
  hold: CallHold;
  accountId: string;
  keyHash: string;
  model: string;
  apiType: string;
  startedAt: number;
  promptChars: number;
  /** Lines that measure their usage: what the stream bills if it ends before any progress (else estimated from text). */
  usage?: MeasuredUsage;
}

/** One stream's progress: the generated text's size, the provider's ids, and measured usage where the line has it. */
export interface OpenCallProgress {
  providerResponseId?: string;
  servedModel?: string;
  usage?: MeasuredUsage;
  /** Every id produced so far; a new one is written at once, not at the next interval (each is a billed item). */
  mediaIds?: string[];
}

export interface OpenCallJournalOptions {
  store: Store;
  /** The usage events' publisher (outbox-backed): a recovered event takes the same durable path as any other. */
  publisher: TypedPublisher<TopicMessages>;
  logger: Logger;
  leaseMs: number;
  /** At most one progress write per stream per this interval. */
  checkpointMs: number;
  sweepMs: number;
  /** Names this instance's entries (with a random suffix) unless `instanceId` is given. */
  serviceName: string;
  instanceId?: string;
  now?: () => number;
}

/** Upper bound on entries one sweep recovers, so one pass never holds the store for long. */
const SWEEP_BATCH = 100;

/**
 * The open-call journal: makes every stream durable before its provider is called, so usage is billed even
 * when the instance streaming it dies. (Written before the provider call, not between the provider's first
 * byte and reading it: bytes an upstream sends just before dropping would be lost while a write is awaited.)
 * The normal path deletes the entry once the real usage event is safely in the outbox; the sweeper (in every instance) claims entries whose owner's lease lapsed with one atomic
 * find-one-and-update, publishes a usage event estimated from the last checkpoint and marked
 * `usage_estimated`, then deletes the entry. A claimer that dies before the delete lets its claim lapse and
 * the entry is published again: billing is idempotent on the request id, so it is charged once.
 * Every service that streams (inference, media) keeps its entries here; an entry carries all its usage event
 * needs, so an instance of any of them that shares the store may bill it.
 */
export class OpenCallJournal {
  readonly instanceId: string;
  private readonly calls: Collection<OpenCallDoc>;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly live = new Set<string>();
  private timers: NodeJS.Timeout[] = [];
  private running = new Set<Promise<unknown>>();

  constructor(private readonly opts: OpenCallJournalOptions) {
    this.instanceId = opts.instanceId ?? `${opts.serviceName}-${randomUUID()}`;
    this.calls = opts.store.collection<OpenCallDoc>(OPEN_CALLS_COLLECTION);
    this.now = opts.now ?? Date.now;
    this.logger = opts.logger.child({ component: 'open-call-journal' });
  }

  async ensureIndexes(): Promise<void> {
    await this.calls.ensureIndex({ fields: { lease_until_ms: 1 } });
    // Leases are renewed by id: an owner index cost every stream's insert and delete (about a third of the
    // journal's store time on the embedded engine) for one query every few seconds. Versions before it made one.
    await this.calls.dropIndex({ fields: { owner: 1 } });
  }

  /**
   * Renews this instance's leases and recovers lapsed entries, each on its own interval and never behind the
   * other (a slow recovery must not let this instance's own leases lapse); a pass still running is not doubled.
   */
  start(): void {
    const every = (ms: number, task: () => Promise<unknown>) => {
      let pass: Promise<unknown> | null = null;
      const timer = setInterval(() => {
        if (pass) return;
        pass = task().finally(() => { this.running.delete(pass!); pass = null; });
        this.running.add(pass);
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(Math.max(1, Math.floor(this.opts.leaseMs / 3)), () => this.renewLeases());
    every(this.opts.sweepMs, () => this.recoverLapsed());
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.all(this.running);
  }

  /** A stream about to start; nothing is written until `sendingTo` names the deployment it goes to. */
  begin(start: OpenCallStart): OpenCall {
    return new OpenCall(this, start);
  }

  /**
   * @internal writes the entry (first attempt) or moves it to the next deployment (a fallback). When the store
   * refuses, the stream still runs (a journal outage must not stop serving) but is not recoverable: logged.
   */
  async write(start: OpenCallStart, providerName: string, deploymentId: string, inserted: boolean): Promise<boolean> {
    const now = this.now();
    try {
      if (inserted) {
        await this.calls.updateOne({ _id: start.requestId, owner: this.instanceId }, { $set: { provider: providerName, deployment: deploymentId, sent_at_ms: now } });
        return true;
      }
      await this.calls.insertOne({
        _id: start.requestId,
        owner: this.instanceId,
        lease_until_ms: now + this.opts.leaseMs,
        account_id: start.accountId,
        key_hash: start.keyHash,
        model: start.model,
        provider: providerName,
        deployment: deploymentId,
        api_type: start.apiType,
        started_at_ms: start.startedAt,
        sent_at_ms: now,
        prompt_tokens_estimate: estimatedTokens(start.promptChars),
        output_chars: 0,
        provider_response_id: '',
        served_model: '',
        checkpoint_at_ms: now,
        ...(start.usage ? { usage: start.usage } : {}),
        ...(start.hold.grant ? { hold_id: start.hold.holdId, hold_micros: start.hold.micros } : {}),
        ...(start.traceId ? { trace_id: start.traceId } : {}),
      });
      this.live.add(start.requestId);
      return true;
    } catch (err) {
      this.logger.warn({ err, requestId: start.requestId }, 'stream not journaled; its usage is lost if this instance dies before it ends');
      return inserted;
    }
  }

  /** Extends the lease of every entry this instance streams; one write, and none while nothing streams. */
  async renewLeases(): Promise<void> {
    if (this.live.size === 0) return;
    try {
      await this.calls.updateMany({ _id: { $in: [...this.live] }, owner: this.instanceId }, { $set: { lease_until_ms: this.now() + this.opts.leaseMs } });
    } catch (err) {
      this.logger.warn({ err }, 'open-call leases not renewed; retrying next interval');
    }
  }

  /** Bills, as estimated, every entry whose owner's lease lapsed. Returns how many were published. */
  async recoverLapsed(): Promise<number> {
    let published = 0;
    try {
      for (let i = 0; i < SWEEP_BATCH; i++) {
        const now = this.now();
        const claimed = await this.calls.findOneAndUpdate(
          { lease_until_ms: { $lt: now } },
          { $set: { owner: this.instanceId, lease_until_ms: now + this.opts.leaseMs } },
        );
        if (!claimed) break;
        // One of this instance's own streams whose renewal was late: the claim just renewed it, nothing to bill.
        if (this.live.has(claimed._id)) continue;
        this.opts.publisher.enqueue(TOPICS.usage, { key: claimed.account_id, value: estimatedUsageEvent(claimed) });
        await this.opts.publisher.flush();
        await this.calls.deleteOne({ _id: claimed._id, owner: this.instanceId });
        published++;
        this.logger.info({ requestId: claimed._id, deployment: claimed.deployment }, 'billed a stream its instance left unfinished, with estimated usage');
      }
    } catch (err) {
      this.logger.warn({ err }, 'open-call recovery failed; a lapsed claim is retried next interval');
    }
    return published;
  }

  /** @internal progress of one stream; only the owner's write lands. */
  async checkpoint(id: string, progress: Pick<OpenCallDoc, 'output_chars' | 'provider_response_id' | 'served_model' | 'usage' | 'media_ids'>): Promise<void> {
    await this.calls.updateOne({ _id: id, owner: this.instanceId }, { $set: { ...progress, checkpoint_at_ms: this.now() } });
  }

  /** @internal the real usage event was recorded (`afterFlush`: once it is durable), or nothing is to be billed. */
  async remove(id: string, afterFlush: boolean): Promise<void> {
    // Sent with the publisher's next batch, not on its own: the entry covers the event until then, and its
    // lease is renewed until it is gone (a failed delete leaves it renewed while this instance lives).
    if (afterFlush) await this.opts.publisher.whenSent();
    await this.calls.deleteOne({ _id: id, owner: this.instanceId });
    this.live.delete(id);
  }

  /** @internal */
  clock(): number {
    return this.now();
  }

  /** @internal */
  get checkpointMs(): number {
    return this.opts.checkpointMs;
  }

  /** @internal */
  warn(err: unknown, requestId: string, what: string): void {
    this.logger.warn({ err, requestId }, what);
  }
}

/** One journaled stream: where it was sent, what it generated (checkpointed at most once per interval). */
export class OpenCall {
  private written = false;
  private outputChars = 0;
  private providerResponseId = '';
  private servedModel = '';
  private usage: MeasuredUsage | undefined;
  private mediaIds: string[] = [];
  private lastWriteAt: number;
  private checkpointing = false;
  /** A new media id arrived while a checkpoint was being written: write again once it is done. */
  private newItemPending = false;
  private closed = false;

  constructor(private readonly journal: OpenCallJournal, private readonly start: OpenCallStart) {
    this.lastWriteAt = journal.clock();
    this.usage = start.usage;
  }

  get requestId(): string {
    return this.start.requestId;
  }

  /** Call right before each provider attempt; never throws, so a journal failure is never a provider failure. */
  async sendingTo(providerName: string, deploymentId: string): Promise<void> {
    this.written = await this.journal.write(this.start, providerName, deploymentId, this.written);
  }

  noteOutput(chars: number, progress: OpenCallProgress = {}): void {
    this.outputChars += chars;
    if (progress.providerResponseId) this.providerResponseId = progress.providerResponseId;
    if (progress.servedModel) this.servedModel = progress.servedModel;
    if (progress.usage) this.usage = progress.usage;
    const newItem = (progress.mediaIds?.length ?? 0) > this.mediaIds.length;
    if (newItem) this.mediaIds = [...progress.mediaIds!];
    if (!this.written || this.closed) return;
    if (this.checkpointing) {
      this.newItemPending ||= newItem;
      return;
    }
    const now = this.journal.clock();
    if (!newItem && now - this.lastWriteAt < this.journal.checkpointMs) return;
    this.writeCheckpoint(now);
  }

  private writeCheckpoint(now: number): void {
    this.checkpointing = true;
    this.lastWriteAt = now;
    this.journal.checkpoint(this.requestId, {
      output_chars: this.outputChars, provider_response_id: this.providerResponseId, served_model: this.servedModel,
      ...(this.usage ? { usage: this.usage } : {}), ...(this.mediaIds.length > 0 ? { media_ids: this.mediaIds } : {}),
    })
      .catch((err) => this.journal.warn(err, this.requestId, 'open-call checkpoint failed'))
      .finally(() => {
        this.checkpointing = false;
        if (!this.newItemPending || this.closed) return;
        this.newItemPending = false;
        this.writeCheckpoint(this.journal.clock());
      });
  }

  /**
   * Call right after the stream's real usage event was enqueued. Until the entry is gone the owner keeps renewing
   * its lease, so it is never billed twice while this instance lives; if the instance dies first, billing drops
   * the recovered duplicate by request id.
   */
  close(): void {
    this.end(true);
  }

  /** No stream came of it (every attempt failed before a first byte): nothing to bill. */
  discard(): void {
    this.end(false);
  }

  private end(afterFlush: boolean): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.written) return;
    this.journal.remove(this.requestId, afterFlush).catch((err) => this.journal.warn(err, this.requestId, 'open-call entry not removed; billed again only if this instance dies, and billing drops a duplicate'));
  }
}
