import type { Collection, Store } from '@gw/store';
import type { OutgoingMessage } from '../port';
import { KeyedQueue } from '../internal/async';
import { entryId, type GroupDoc, type LogEntryDoc, type TopicDoc } from './docs';
import { GROUPS_COLLECTION, logCollectionName, TOPICS_COLLECTION } from './names';

/** The durable, totally ordered log of each topic, kept in store collections. */
export class TopicLogs {
  private readonly topics: Collection<TopicDoc>;
  private readonly groups: Collection<GroupDoc>;
  private readonly indexed = new Map<string, Promise<void>>();
  /** In-process appends to one topic run one at a time, so only a failed append can leave a gap. */
  private readonly appends = new KeyedQueue();

  constructor(private readonly store: Store) {
    this.topics = store.collection<TopicDoc>(TOPICS_COLLECTION);
    this.groups = store.collection<GroupDoc>(GROUPS_COLLECTION);
  }

  /** Appends messages in order; resolves once they are stored. Returns the last sequence. */
  append<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<number> {
    return this.appends.run(topic, async () => {
      const log = await this.log(topic);
      const n = messages.length;
      // Reserve n sequences atomically; another process on a shared store gets a disjoint range.
      const meta = await this.topics.findOneAndUpdate(
        { _id: topic },
        { $inc: { seq: n }, $setOnInsert: { trimmedThrough: 0 } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!meta) throw new Error(`could not reserve sequences on topic ${topic}`);
      const first = meta.seq - n + 1;
      const publishedAt = Date.now();
      await log.insertMany(
        messages.map((m, i) => ({
          _id: entryId(first + i),
          seq: first + i,
          key: m.key,
          value: JSON.stringify(m.value ?? null),
          publishedAt,
        })),
      );
      return meta.seq;
    });
  }

  /** Up to `limit` entries after `offset`, in sequence order (may contain gaps). */
  async read(topic: string, offset: number, limit: number): Promise<LogEntryDoc[]> {
    const log = await this.log(topic);
    return log.find({ seq: { $gt: offset } }, { sort: { seq: 1 }, limit });
  }

  async meta(topic: string): Promise<TopicDoc | null> {
    return this.topics.findOne({ _id: topic });
  }

  /**
   * Deletes entries every group of the topic has committed. Topics nobody consumes yet are kept whole, for the
   * first group to come. Returns how many entries were deleted.
   */
  async trim(topic: string): Promise<number> {
    const groups = await this.groups.find({ topic });
    if (groups.length === 0) return 0;
    const floor = Math.min(...groups.map((g) => g.offset));
    if (floor <= 0) return 0;
    // Mark first: a consumer that then sees missing entries below the mark knows they were trimmed, not lost.
    await this.topics.updateOne({ _id: topic }, { $max: { trimmedThrough: floor } });
    const log = await this.log(topic);
    return log.deleteMany({ seq: { $lte: floor } });
  }

  private async log(topic: string): Promise<Collection<LogEntryDoc>> {
    const log = this.store.collection<LogEntryDoc>(logCollectionName(topic));
    let ready = this.indexed.get(topic);
    if (!ready) {
      ready = log.ensureIndex({ fields: { seq: 1 }, unique: true });
      this.indexed.set(topic, ready);
      ready.catch(() => this.indexed.delete(topic));
    }
    await ready;
    return log;
  }
}
