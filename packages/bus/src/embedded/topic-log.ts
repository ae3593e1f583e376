import { setTimeout as sleep } from 'node:timers/promises';
import type { AppendLogs, Collection, LogEntry, LogMark, NativeAppendLogs, Store } from '@gw/store';
import type { OutgoingMessage } from '../port';
import { DocumentLogs } from './document-logs';
import type { GroupDoc } from './docs';
import { DOCUMENT_LOG_PREFIX, DOCUMENT_TOPICS_COLLECTION, GROUPS_COLLECTION } from './names';

/** Entries one trim transaction deletes at most, and the pause between two such transactions. */
const TRIM_SLICE = 5_000;
const TRIM_PAUSE_MS = 10;

/** How much of a topic is kept whatever its groups have committed; 0 turns a bound off. */
export interface Retention {
  maxAgeMs: number;
  maxEntries: number;
  /** How long an ephemeral group's member may be gone before the group is deleted and no longer holds entries. */
  ephemeralGroupGraceMs: number;
}

/**
 * The durable, totally ordered log of each topic, numbered from 1: one of the store's own append logs per
 * topic where it keeps them (the embedded engine), which first take over topics an earlier version kept as
 * documents; elsewhere (MongoDB) document collections.
 */
export class TopicLogs {
  private readonly native: NativeAppendLogs | null;
  private readonly logs: AppendLogs;
  private readonly groups: Collection<GroupDoc>;
  private adopted: Promise<void> | null = null;

  constructor(store: Store) {
    this.native = store.logs ?? null;
    this.logs = store.logs ?? new DocumentLogs(store, DOCUMENT_TOPICS_COLLECTION, DOCUMENT_LOG_PREFIX);
    this.groups = store.collection<GroupDoc>(GROUPS_COLLECTION);
  }

  /** Appends messages in order; resolves once they are stored. Returns the last sequence. */
  async append<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<number> {
    await this.ready();
    return this.logs.append(topic, messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value ?? null) })), Date.now());
  }

  /** Up to `limit` entries after `offset` within `maxChars` of values, in sequence order (may contain gaps). */
  async read(topic: string, offset: number, limit: number, maxChars?: number): Promise<LogEntry[]> {
    await this.ready();
    return this.logs.read(topic, offset, limit, maxChars);
  }

  async meta(topic: string): Promise<LogMark | null> {
    await this.ready();
    return this.logs.mark(topic);
  }

  /** Every topic that has a log in this store. */
  async topicNames(): Promise<string[]> {
    await this.ready();
    return this.logs.names();
  }

  /**
   * Deletes entries every group of the topic has committed, and beyond that whatever falls outside the
   * retention, committed or not (as a Kafka topic does). Without retention, a topic nobody consumes yet is
   * kept whole for the first group to come. Returns how many entries were deleted.
   */
  async trim(topic: string, retention: Retention): Promise<number> {
    const meta = await this.meta(topic);
    if (!meta) return 0;
    const groups = await this.liveGroups(topic, retention.ephemeralGroupGraceMs);
    let floor = groups.length > 0 ? Math.min(...groups.map((g) => g.offset)) : 0;
    if (retention.maxEntries > 0) floor = Math.max(floor, meta.seq - retention.maxEntries);
    if (retention.maxAgeMs > 0) {
      const newestExpired = await this.logs.newestPublishedBefore(topic, Date.now() - retention.maxAgeMs);
      if (newestExpired !== null) floor = Math.max(floor, newestExpired);
    }
    if (floor <= meta.trimmedThrough) return 0;
    // Mark first: a consumer that then sees missing entries below the mark knows they were trimmed, not lost.
    await this.logs.markTrimmed(topic, floor);
    // A slice per transaction, with a pause between: a minute of entries deleted in one transaction holds the
    // file's write lock (and this event loop) for as long as that takes, and every other writer on the file
    // (another thread's connection, in SQLite's busy wait) with it. From the oldest entry kept, not the last
    // mark: a trim cut short (a crash) left entries below it.
    const oldest = await this.logs.oldest(topic);
    let deleted = 0;
    for (let from = oldest !== null ? oldest - 1 : floor; from < floor; from += TRIM_SLICE) {
      deleted += await this.logs.deleteRange(topic, from, Math.min(floor, from + TRIM_SLICE));
      if (from + TRIM_SLICE < floor) await sleep(TRIM_PAUSE_MS);
    }
    return deleted;
  }

  /**
   * The topic's groups, less the ephemeral ones whose member has been gone for the grace: those are deleted
   * (their name was made for one subscription, so nothing will resume them) and hold nothing back.
   */
  private async liveGroups(topic: string, graceMs: number): Promise<GroupDoc[]> {
    const cutoff = Date.now() - graceMs;
    const live: GroupDoc[] = [];
    for (const g of await this.groups.find({ topic })) {
      const gone = g.ephemeral && g.leaseUntil < cutoff && (g.createdAt ?? 0) < cutoff;
      // Guarded: a member that renewed meanwhile keeps its group, and its position holds entries as before.
      if (gone && (await this.groups.deleteOne({ _id: g._id, leaseUntil: { $lt: cutoff } })) > 0) continue;
      live.push(g);
    }
    return live;
  }

  /** Moves topics kept as document collections into the store's own logs, once. */
  private ready(): Promise<void> {
    const native = this.native;
    if (!native) return Promise.resolve();
    // Until the move has succeeded, every use of the bus answers with its refusal and writes nothing; each
    // use tries again, so a passing fault (the file busy past the timeout) does not refuse the bus for good.
    this.adopted ??= native.adoptDocumentLogs(DOCUMENT_TOPICS_COLLECTION, DOCUMENT_LOG_PREFIX).then(
      () => undefined,
      (err: unknown) => {
        this.adopted = null;
        throw err;
      },
    );
    return this.adopted;
  }
}
