import { setTimeout as sleep } from 'node:timers/promises';
import type { Collection, Store } from '@gw/store';
import type { OutgoingMessage } from '../port';
import { KeyedQueue } from '../internal/async';
import { entryId, type GroupDoc, type LogEntryDoc, type TopicDoc } from './docs';
import { GROUPS_COLLECTION, logCollectionName, TOPICS_COLLECTION } from './names';

/** Entries one trim transaction deletes at most, and the pause between two such transactions. */
const TRIM_SLICE = 5_000;
const TRIM_PAUSE_MS = 10;

/** How much of a topic is kept whatever its groups have committed; 0 turns a bound off. */
export interface Retention {
  maxAgeMs: number;
  maxEntries: number;
}

/** The durable, totally ordered log of each topic, kept in store collections (one table per topic on the embedded store). */
export class TopicLogs {
  private readonly topics: Collection<TopicDoc>;
  private readonly groups: Collection<GroupDoc>;
  private readonly indexed = new Map<string, Promise<void>>();
  /** Appends to one topic in this process, one at a time where the store has no atomic write. */
  private readonly appends = new KeyedQueue();

  constructor(private readonly store: Store) {
    this.topics = store.collection<TopicDoc>(TOPICS_COLLECTION);
    this.groups = store.collection<GroupDoc>(GROUPS_COLLECTION);
  }

  /** Appends messages in order; resolves once they are stored. Returns the last sequence. */
  async append<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<number> {
    const log = await this.log(topic);
    const n = messages.length;
    const reserve = { $inc: { seq: n }, $setOnInsert: { trimmedThrough: 0 } };
    const entries = (last: number, publishedAt = Date.now()): LogEntryDoc[] => messages.map((m, i) => ({
      _id: entryId(last - n + 1 + i),
      seq: last - n + 1 + i,
      key: m.key,
      value: JSON.stringify(m.value ?? null),
      publishedAt,
    }));
    if (this.store.atomically) {
      // The reservation and its entries in one transaction: one commit, and no gap even if the process dies.
      return this.store.atomically((collection) => {
        const meta = collection<TopicDoc>(TOPICS_COLLECTION).findOneAndUpdate({ _id: topic }, reserve, { upsert: true, returnDocument: 'after' });
        if (!meta) throw new Error(`could not reserve sequences on topic ${topic}`);
        collection<LogEntryDoc>(log.name).insertMany(entries(meta.seq));
        return meta.seq;
      }, `append ${topic}`);
    }
    // Elsewhere two steps, one append at a time per topic in this process, so only a failed append leaves a gap.
    return this.appends.run(topic, async () => {
      // Another process on a shared store gets a disjoint range.
      const meta = await this.topics.findOneAndUpdate({ _id: topic }, reserve, { upsert: true, returnDocument: 'after' });
      if (!meta) throw new Error(`could not reserve sequences on topic ${topic}`);
      await log.insertMany(entries(meta.seq));
      return meta.seq;
    });
  }

  /** Up to `limit` entries after `offset`, in sequence order (may contain gaps). */
  async read(topic: string, offset: number, limit: number): Promise<LogEntryDoc[]> {
    const log = await this.log(topic);
    return log.find({ seq: { $gt: offset } }, { sort: { seq: 1 }, limit });
  }

  /** Every topic that has a log in this store. */
  async topicNames(): Promise<string[]> {
    return (await this.topics.find({})).map((t) => t._id);
  }

  async meta(topic: string): Promise<TopicDoc | null> {
    return this.topics.findOne({ _id: topic });
  }

  /**
   * Deletes entries every group of the topic has committed, and beyond that whatever falls outside the
   * retention, committed or not (as a Kafka topic does). Without retention, a topic nobody consumes yet is
   * kept whole for the first group to come. Returns how many entries were deleted.
   */
  async trim(topic: string, retention: Retention): Promise<number> {
    const meta = await this.meta(topic);
    if (!meta) return 0;
    const groups = await this.groups.find({ topic });
    let floor = groups.length > 0 ? Math.min(...groups.map((g) => g.offset)) : 0;
    if (retention.maxEntries > 0) floor = Math.max(floor, meta.seq - retention.maxEntries);
    const log = await this.log(topic);
    if (retention.maxAgeMs > 0) {
      const newestExpired = await log.findOne({ publishedAt: { $lt: Date.now() - retention.maxAgeMs } }, { sort: { publishedAt: -1 } });
      if (newestExpired) floor = Math.max(floor, newestExpired.seq);
    }
    if (floor <= meta.trimmedThrough) return 0;
    // Mark first: a consumer that then sees missing entries below the mark knows they were trimmed, not lost.
    await this.topics.updateOne({ _id: topic }, { $max: { trimmedThrough: floor } });
    // A slice per transaction, with a pause between: a minute of entries deleted in one transaction holds the
    // file's write lock (and this event loop) for as long as that takes, and every other writer on the file
    // (another process's connection, in SQLite's busy wait) with it. From the oldest entry kept, not the last
    // mark: a trim cut short (a crash) left entries below it. The bound on `seq` is what lets the embedded store
    // answer from the index: without it the sort is done in memory over every entry (a minute's worth, over
    // 100 MB of garbage per trim at 1,000 calls/s).
    const oldest = await log.findOne({ seq: { $gte: 0 } }, { sort: { seq: 1 } });
    let deleted = 0;
    for (let from = oldest ? oldest.seq - 1 : floor; from < floor; from += TRIM_SLICE) {
      deleted += await log.deleteMany({ seq: { $gt: from, $lte: Math.min(floor, from + TRIM_SLICE) } });
      if (from + TRIM_SLICE < floor) await sleep(TRIM_PAUSE_MS);
    }
    return deleted;
  }

  private async log(topic: string): Promise<Collection<LogEntryDoc>> {
    const log = this.store.collection<LogEntryDoc>(logCollectionName(topic));
    let ready = this.indexed.get(topic);
    if (!ready) {
      ready = Promise.all([log.ensureIndex({ fields: { seq: 1 }, unique: true }), log.ensureIndex({ fields: { publishedAt: 1 } })]).then(() => undefined);
      this.indexed.set(topic, ready);
      ready.catch(() => this.indexed.delete(topic));
    }
    await ready;
    return log;
  }
}
