import type { AppendLogs, Collection, Doc, LogEntry, LogMark, Store } from '@gw/store';
import { chunkWithin, KeyedQueue } from '../internal/async';

/** One entry, as a document of its topic's collection. */
interface EntryDoc extends Doc {
  seq: number;
  key: string;
  /** JSON text, as on Kafka: values round-trip identically on every engine and need no field-name rules. */
  value: string;
  publishedAt: number;
}

/** `_id` is the topic. */
interface MarkDoc extends Doc {
  seq: number;
  trimmedThrough: number;
}

/** Zero-padded so `_id` order is sequence order too. */
const entryId = (seq: number) => String(seq).padStart(16, '0');

/**
 * Topic logs kept as document collections, for a store without append logs of its own (MongoDB): the marks
 * in `metaCollection`, each topic's entries in `<entryPrefix><topic>`. The embedded engine once kept them so
 * too, and moves them into its log tables on first use (`adoptDocumentLogs`).
 */
export class DocumentLogs implements AppendLogs {
  private readonly marks: Collection<MarkDoc>;
  private readonly indexed = new Map<string, Promise<void>>();
  /** Appends to one topic in this process, one at a time. */
  private readonly appends = new KeyedQueue();

  constructor(private readonly store: Store, metaCollection: string, private readonly entryPrefix: string) {
    this.marks = store.collection<MarkDoc>(metaCollection);
  }

  /**
   * Two steps, one append at a time per topic in this process: the numbers (another process on the same
   * store gets a disjoint range), then the entries. Only an append that fails between them leaves a gap,
   * which consumers wait out.
   */
  append(log: string, entries: { key: string; value: string }[], publishedAt: number): Promise<number> {
    return this.appends.run(log, async () => {
      const collection = await this.entries(log);
      const n = entries.length;
      const mark = await this.marks.findOneAndUpdate({ _id: log }, { $inc: { seq: n }, $setOnInsert: { trimmedThrough: 0 } }, { upsert: true, returnDocument: 'after' });
      if (!mark) throw new Error(`could not reserve sequences on topic ${log}`);
      await collection.insertMany(entries.map((e, i) => {
        const seq = mark.seq - n + 1 + i;
        return { _id: entryId(seq), seq, key: e.key, value: e.value, publishedAt };
      }));
      return mark.seq;
    });
  }

  /** The character budget cuts what was read (a document store has no cheaper way to stop at a size). */
  async read(log: string, after: number, limit: number, maxChars = Infinity): Promise<LogEntry[]> {
    const docs = await (await this.entries(log)).find({ seq: { $gt: after } }, { sort: { seq: 1 }, limit });
    const [within = []] = chunkWithin(docs, limit, maxChars, (d) => d.value.length);
    return within.map((d) => ({ seq: d.seq, key: d.key, value: d.value, publishedAt: d.publishedAt }));
  }

  async mark(log: string): Promise<LogMark | null> {
    const doc = await this.marks.findOne({ _id: log });
    return doc ? { seq: doc.seq, trimmedThrough: doc.trimmedThrough } : null;
  }

  async names(): Promise<string[]> {
    return (await this.marks.find({}, { sort: { _id: 1 } })).map((m) => m._id);
  }

  async markTrimmed(log: string, through: number): Promise<void> {
    await this.marks.updateOne({ _id: log }, { $max: { trimmedThrough: through } });
  }

  async oldest(log: string): Promise<number | null> {
    // The bound on `seq` lets the engine answer from the index instead of sorting every entry.
    return (await (await this.entries(log)).findOne({ seq: { $gte: 0 } }, { sort: { seq: 1 } }))?.seq ?? null;
  }

  async newestPublishedBefore(log: string, at: number): Promise<number | null> {
    // The entries of one append share their time: the newest is the one numbered highest.
    return (await (await this.entries(log)).findOne({ publishedAt: { $lt: at } }, { sort: { publishedAt: -1, seq: -1 } }))?.seq ?? null;
  }

  async deleteRange(log: string, after: number, through: number): Promise<number> {
    return (await this.entries(log)).deleteMany({ seq: { $gt: after, $lte: through } });
  }

  private async entries(log: string): Promise<Collection<EntryDoc>> {
    const collection = this.store.collection<EntryDoc>(`${this.entryPrefix}${log}`);
    let ready = this.indexed.get(log);
    if (!ready) {
      ready = Promise.all([collection.ensureIndex({ fields: { seq: 1 }, unique: true }), collection.ensureIndex({ fields: { publishedAt: 1 } })]).then(() => undefined);
      this.indexed.set(log, ready);
      ready.catch(() => this.indexed.delete(log));
    }
    await ready;
    return collection;
  }
}
