import { ConflictError } from '@gw/platform';

/**
 * The store port: document collections with the operations every engine gives (single-document atomic
 * updates, unique indexes; no multi-document transactions, no change streams). Repository code is written
 * against this interface only; engines are chosen by configuration.
 */

/** A document always has a string `_id` chosen by the caller. */
export interface Doc {
  _id: string;
}

/**
 * Mongo-style filter, the subset every engine supports: equality on (dotted) fields and the operators
 * `$eq $ne $gt $gte $lt $lte $in $nin $exists`, plus top-level `$or`.
 */
export type Filter = Record<string, unknown>;

/** Mongo-style update, the subset every engine supports: `$set $inc $unset $setOnInsert $push $max $min`. */
export interface Update {
  $set?: Record<string, unknown>;
  $inc?: Record<string, number>;
  $unset?: Record<string, true | 1 | ''>;
  $setOnInsert?: Record<string, unknown>;
  $push?: Record<string, unknown>;
  $max?: Record<string, unknown>;
  $min?: Record<string, unknown>;
}

export interface FindOptions {
  sort?: Record<string, 1 | -1>;
  limit?: number;
  skip?: number;
}

export interface UpdateOptions {
  upsert?: boolean;
}

export interface FindOneAndUpdateOptions extends UpdateOptions {
  /** Which version of the document to return; default `after`. */
  returnDocument?: 'before' | 'after';
}

export interface UpdateResult {
  matched: number;
  modified: number;
  /** `_id` of the inserted document when an upsert inserted one. */
  upsertedId: string | null;
}

export interface InsertManyResult {
  /** `_id`s that were inserted. */
  insertedIds: string[];
  /** `_id`s skipped because they violated a unique index (only when `ignoreDuplicates`). */
  duplicateIds: string[];
}

export interface IndexSpec {
  fields: Record<string, 1 | -1>;
  unique?: boolean;
  /** Unique only among documents that have the field (sparse). */
  sparse?: boolean;
}

export interface Collection<T extends Doc> {
  readonly name: string;
  ensureIndex(spec: IndexSpec): Promise<void>;
  /** Throws `DuplicateKeyError` on a unique-index violation (including `_id`). */
  insertOne(doc: T): Promise<T>;
  /**
   * Inserts many documents. Without `ignoreDuplicates` any violation throws `DuplicateKeyError` (documents
   * before it may be written). With it, violating documents are skipped and reported, the rest are written.
   */
  insertMany(docs: T[], opts?: { ignoreDuplicates?: boolean }): Promise<InsertManyResult>;
  findOne(filter: Filter, opts?: Omit<FindOptions, 'limit'>): Promise<T | null>;
  find(filter: Filter, opts?: FindOptions): Promise<T[]>;
  count(filter: Filter): Promise<number>;
  /** Atomic on one document: the filter and the update are applied as one step (a guard in the filter holds). */
  updateOne(filter: Filter, update: Update, opts?: UpdateOptions): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  /** Atomic claim: returns the matched document (after or before the update) or null when nothing matched. */
  findOneAndUpdate(filter: Filter, update: Update, opts?: FindOneAndUpdateOptions): Promise<T | null>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
}

/** The synchronous operations a write given to `Store.atomically` may run, with the same semantics as `Collection`'s. */
export interface AtomicCollection<T extends Doc> {
  findOneAndUpdate(filter: Filter, update: Update, opts?: FindOneAndUpdateOptions): T | null;
  insertMany(docs: T[], opts?: { ignoreDuplicates?: boolean }): InsertManyResult;
}

export interface Store {
  /** Engine name, for logs and health: `embedded` or `mongo`. */
  readonly engine: string;
  collection<T extends Doc>(name: string): Collection<T>;
  /**
   * Runs `write` as one atomic step over several collections: all of its changes land, or none (a throw
   * undoes them). Offered only by engines that can (the embedded engine, inside one transaction of its group
   * commit); absent elsewhere, where a caller takes its steps one by one. `label` names the write in the
   * engine's slow-write warning.
   */
  atomically?<R>(write: (collection: <T extends Doc>(name: string) => AtomicCollection<T>) => R, label?: string): Promise<R>;
  /** True when the engine answers; used by readiness. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** The one error every engine throws for a unique-index violation. */
export class DuplicateKeyError extends ConflictError {
  constructor(readonly collection: string, readonly detail = '') {
    super(`Duplicate key in ${collection}${detail ? `: ${detail}` : ''}`, 'duplicate_key');
  }
}
