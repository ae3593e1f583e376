import { mongo } from 'mongoose';
import type {
  Collection,
  Doc,
  Filter,
  FindOneAndUpdateOptions,
  FindOptions,
  IndexSpec,
  InsertManyResult,
  Update,
  UpdateOptions,
  UpdateResult,
} from '../port';
import { newId, requireStringId } from '../semantics/ids';
import { upsertFixesId } from '../semantics/update';
import { duplicateIndexes, mapDuplicateKey } from './duplicate-key';
import { storeUnavailable, type AnswerBound } from './answer-bound';

type NativeCollection = mongo.Collection<mongo.Document>;
type NativeDoc = mongo.OptionalId<mongo.Document>;

/**
 * A collection on MongoDB (or a Mongo-wire server) through the driver mongoose bundles. An operation on a server
 * that has gone silent (see AnswerBound), or one it cannot be reached for, fails as unavailable (a 503) instead
 * of hanging its caller. Such a write may still land once the server answers again: callers' writes are
 * idempotent or single-document, so it lands whole or not at all.
 */
export class MongoCollection<T extends Doc> implements Collection<T> {
  constructor(
    readonly name: string,
    private readonly db: () => Promise<mongo.Db>,
    private readonly bound: AnswerBound,
  ) {}

  /** Unbounded: start-up work, which may build an index on a large collection, and serves no caller. */
  async ensureIndex(spec: IndexSpec): Promise<void> {
    const options: mongo.CreateIndexesOptions = {};
    if (spec.unique) options.unique = true;
    if (spec.sparse) options.sparse = true;
    const c = await this.collection();
    await c.createIndex(spec.fields, options).catch((err: unknown) => { throw unavailableIfUnreachable(err, this.name); });
  }

  async dropIndex(spec: IndexSpec): Promise<void> {
    const c = await this.collection();
    // MongoDB names an index by its fields alone (`owner_1`); its options do not change the name.
    const name = Object.entries(spec.fields).map(([field, direction]) => `${field}_${direction}`).join('_');
    await c.dropIndex(name).catch((err: unknown) => {
      // 27 IndexNotFound; 26 NamespaceNotFound (no collection yet): nothing to drop.
      if (err instanceof mongo.MongoServerError && (err.code === 27 || err.code === 26)) return;
      throw unavailableIfUnreachable(err, this.name);
    });
  }

  async insertOne(doc: T): Promise<T> {
    requireStringId(doc, this.name);
    await this.run((c) => c.insertOne(doc as unknown as NativeDoc));
    return { ...doc };
  }

  async insertMany(docs: T[], opts: { ignoreDuplicates?: boolean } = {}): Promise<InsertManyResult> {
    docs.forEach((d) => requireStringId(d, this.name));
    const ids = docs.map((d) => d._id);
    if (docs.length === 0) return { insertedIds: [], duplicateIds: [] };
    if (!opts.ignoreDuplicates) {
      await this.run((c) => c.insertMany(docs as unknown as NativeDoc[], { ordered: true }));
      return { insertedIds: ids, duplicateIds: [] };
    }
    return this.bound.run(this.name, async () => {
      const c = await this.collection();
      try {
        await c.insertMany(docs as unknown as NativeDoc[], { ordered: false });
        return { insertedIds: ids, duplicateIds: [] };
      } catch (err) {
        const skipped = duplicateIndexes(err);
        if (!skipped) throw unavailableIfUnreachable(mapDuplicateKey(err, this.name), this.name);
        const skippedSet = new Set(skipped);
        return {
          insertedIds: ids.filter((_, i) => !skippedSet.has(i)),
          duplicateIds: skipped.map((i) => ids[i]),
        };
      }
    });
  }

  async findOne(filter: Filter, opts: Omit<FindOptions, 'limit'> = {}): Promise<T | null> {
    return (await this.run((c) => c.findOne(filter, { sort: opts.sort, skip: opts.skip }))) as T | null;
  }

  async find(filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    return (await this.run((c) => c.find(filter, { sort: opts.sort, skip: opts.skip, limit: opts.limit }).toArray())) as unknown as T[];
  }

  async count(filter: Filter): Promise<number> {
    return this.run((c) => c.countDocuments(filter));
  }

  async updateOne(filter: Filter, update: Update, opts: UpdateOptions = {}): Promise<UpdateResult> {
    const upsert = opts.upsert ?? false;
    const r = await this.run((c) => c.updateOne(filter, this.withUpsertId(filter, update, upsert), { upsert }));
    return { matched: r.matchedCount, modified: r.modifiedCount, upsertedId: (r.upsertedId as string | null) ?? null };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const r = await this.run((c) => c.updateMany(filter, update as mongo.UpdateFilter<mongo.Document>));
    return { matched: r.matchedCount, modified: r.modifiedCount, upsertedId: null };
  }

  async findOneAndUpdate(filter: Filter, update: Update, opts: FindOneAndUpdateOptions = {}): Promise<T | null> {
    const upsert = opts.upsert ?? false;
    const doc = await this.run((c) =>
      c.findOneAndUpdate(filter, this.withUpsertId(filter, update, upsert), {
        upsert,
        returnDocument: opts.returnDocument ?? 'after',
        includeResultMetadata: false,
      }),
    );
    return doc as T | null;
  }

  async deleteOne(filter: Filter): Promise<number> {
    return (await this.run((c) => c.deleteOne(filter))).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    return (await this.run((c) => c.deleteMany(filter))).deletedCount;
  }

  /** The server would give an upserted document an ObjectId; the port promises string ids. */
  private withUpsertId(filter: Filter, update: Update, upsert: boolean): mongo.UpdateFilter<mongo.Document> {
    if (!upsert || upsertFixesId(filter, update)) return update as mongo.UpdateFilter<mongo.Document>;
    return { ...update, $setOnInsert: { ...update.$setOnInsert, _id: newId() } } as mongo.UpdateFilter<mongo.Document>;
  }

  private async collection(): Promise<NativeCollection> {
    return (await this.db()).collection(this.name);
  }

  private run<R>(op: (c: NativeCollection) => Promise<R>): Promise<R> {
    return this.bound.run(this.name, async () => {
      const c = await this.collection();
      try {
        return await op(c);
      } catch (err) {
        throw unavailableIfUnreachable(mapDuplicateKey(err, this.name), this.name);
      }
    });
  }
}

/** The driver's errors for a server it cannot reach (or lost mid-operation) as UnavailableError; others unchanged. */
function unavailableIfUnreachable(err: unknown, collection: string): unknown {
  const unreachable = err instanceof mongo.MongoNetworkError || err instanceof mongo.MongoServerSelectionError || err instanceof mongo.MongoNotConnectedError;
  return unreachable ? Object.assign(storeUnavailable(collection, (err as Error).name), { cause: err }) : err;
}
