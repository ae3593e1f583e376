import type Datastore from '@seald-io/nedb';
import {
  DuplicateKeyError,
  type Collection,
  type Doc,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOptions,
  type IndexSpec,
  type InsertManyResult,
  type Update,
  type UpdateOptions,
  type UpdateResult,
} from '../port';
import { newId, requireStringId } from '../semantics/ids';
import { sortDocuments } from '../semantics/sort';
import { applyUpdate, idFirst, planUpdate, upsertBase } from '../semantics/update';
import { cloneValue, toStoredValue, valuesEqual, type PlainObject } from '../semantics/values';
import type { Datafile } from './datafile';
import { nedbQuery, selectStored } from './nedb-query';

function isUniqueViolation(err: unknown): err is { key?: unknown } {
  return (err as { errorType?: string } | null)?.errorType === 'uniqueViolated';
}

/** The outcome of one single-document update, for updateOne and findOneAndUpdate alike. */
interface SingleUpdate {
  before: PlainObject | null;
  after: PlainObject | null;
  modified: boolean;
  upsertedId: string | null;
}

/**
 * A collection on the embedded engine. Reads go straight to NeDB's in-memory data; mutations run one at a
 * time through the datafile's queue, and updates are computed here (MongoDB semantics) and stored as
 * replacements.
 */
export class EmbeddedCollection<T extends Doc> implements Collection<T> {
  constructor(
    readonly name: string,
    private readonly file: Datafile,
  ) {}

  async ensureIndex(spec: IndexSpec): Promise<void> {
    const fields = Object.keys(spec.fields);
    if (fields.length === 0) throw new Error('An index needs at least one field');
    await this.mutate((ds) =>
      ds.ensureIndexAsync({
        fieldName: fields.length === 1 ? fields[0] : fields,
        unique: spec.unique ?? false,
        sparse: spec.sparse ?? false,
      }),
    );
  }

  async insertOne(doc: T): Promise<T> {
    const stored = this.toStoredDoc(doc);
    await this.mutate((ds) => ds.insertAsync(stored));
    return cloneValue(stored) as T;
  }

  async insertMany(docs: T[], opts: { ignoreDuplicates?: boolean } = {}): Promise<InsertManyResult> {
    const stored = docs.map((d) => this.toStoredDoc(d));
    const result: InsertManyResult = { insertedIds: [], duplicateIds: [] };
    if (stored.length === 0) return result;
    return this.mutate(async (ds) => {
      try {
        await ds.insertAsync(stored);
        result.insertedIds = stored.map((d) => d._id as string);
        return result;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      // NeDB rolled the whole batch back; insert one by one as MongoDB does (ordered: stop at the first
      // duplicate; ignoreDuplicates: skip and report each).
      for (const doc of stored) {
        try {
          await ds.insertAsync(doc);
          result.insertedIds.push(doc._id as string);
        } catch (err) {
          if (!isUniqueViolation(err) || !opts.ignoreDuplicates) throw err;
          result.duplicateIds.push(doc._id as string);
        }
      }
      return result;
    });
  }

  async findOne(filter: Filter, opts: Omit<FindOptions, 'limit'> = {}): Promise<T | null> {
    const [doc] = await this.find(filter, { ...opts, limit: 1 });
    return doc ?? null;
  }

  async find(filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    this.file.assertOpen();
    const skip = opts.skip ?? 0;
    if (!Number.isInteger(skip) || skip < 0) throw new Error('skip must be a non-negative integer');
    // As in MongoDB, limit 0 means no limit and a negative limit counts like a positive one.
    const limit = opts.limit ? Math.abs(opts.limit) : Infinity;
    const ds = await this.file.datastore();
    let docs: PlainObject[];
    if (opts.sort && Object.keys(opts.sort).length > 0) {
      docs = sortDocuments(await selectStored(ds, filter), opts.sort).slice(skip, skip + limit);
    } else {
      docs = (await selectStored(ds, filter, skip + limit)).slice(skip);
    }
    return docs.map((d) => cloneValue(d) as T);
  }

  async count(filter: Filter): Promise<number> {
    this.file.assertOpen();
    const ds = await this.file.datastore();
    return ds.countAsync(nedbQuery(ds, filter)) as unknown as Promise<number>;
  }

  async updateOne(filter: Filter, update: Update, opts: UpdateOptions = {}): Promise<UpdateResult> {
    const r = await this.updateSingle(filter, update, opts.upsert ?? false);
    return { matched: r.before ? 1 : 0, modified: r.modified ? 1 : 0, upsertedId: r.upsertedId };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const changes = planUpdate(update);
    return this.mutate(async (ds) => {
      const matched = await selectStored(ds, filter);
      let modified = 0;
      // One replacement at a time: like MongoDB, a failure (a duplicate key) leaves earlier documents updated.
      for (const current of matched) {
        const next = applyUpdate(cloneValue(current), changes, false);
        if (valuesEqual(next, current)) continue;
        await ds.updateAsync({ _id: current._id }, next, {});
        modified++;
      }
      return { matched: matched.length, modified, upsertedId: null };
    });
  }

  async findOneAndUpdate(filter: Filter, update: Update, opts: FindOneAndUpdateOptions = {}): Promise<T | null> {
    const r = await this.updateSingle(filter, update, opts.upsert ?? false);
    const doc = opts.returnDocument === 'before' ? r.before : r.after;
    return doc ? (cloneValue(doc) as T) : null;
  }

  async deleteOne(filter: Filter): Promise<number> {
    return this.mutate((ds) => ds.removeAsync(nedbQuery(ds, filter), { multi: false }));
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.mutate((ds) => ds.removeAsync(nedbQuery(ds, filter), { multi: true }));
  }

  /** Finds the first match and replaces it with the updated copy, or inserts on upsert; one queued step. */
  private updateSingle(filter: Filter, update: Update, upsert: boolean): Promise<SingleUpdate> {
    const changes = planUpdate(update);
    return this.mutate(async (ds) => {
      const [current] = await selectStored(ds, filter, 1);
      if (current) {
        const next = applyUpdate(cloneValue(current), changes, false);
        const modified = !valuesEqual(next, current);
        if (modified) await ds.updateAsync({ _id: current._id }, next, {});
        return { before: current, after: next, modified, upsertedId: null };
      }
      if (!upsert) return { before: null, after: null, modified: false, upsertedId: null };
      const created = applyUpdate(upsertBase(filter), changes, true);
      if (created._id === undefined || created._id === null) created._id = newId();
      const stored = idFirst(created);
      await ds.insertAsync(stored);
      return { before: null, after: stored, modified: false, upsertedId: stored._id as string };
    });
  }

  private toStoredDoc(doc: T): PlainObject {
    requireStringId(doc, this.name);
    return idFirst(toStoredValue(doc) as PlainObject);
  }

  /** Runs a mutation in this collection's queue, with NeDB's unique violations as `DuplicateKeyError`. */
  private mutate<R>(task: (ds: Datastore) => Promise<R>): Promise<R> {
    this.file.assertOpen();
    return this.file.queue.run(async () => {
      try {
        return await task(await this.file.datastore());
      } catch (err) {
        if (isUniqueViolation(err)) throw new DuplicateKeyError(this.name, `key ${JSON.stringify(err.key)}`);
        throw err;
      }
    });
  }
}
