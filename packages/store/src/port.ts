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
  /**
   * Drops the index `ensureIndex(spec)` made, if there is one (a no-op otherwise): an index a newer version no
   * longer queries costs every write that touches its fields.
   */
  dropIndex(spec: IndexSpec): Promise<void>;
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

/** One entry of an append log (`Store.logs`): JSON text numbered in append order. */
export interface LogEntry {
  seq: number;
  key: string;
  value: string;
  /** Epoch ms. */
  publishedAt: number;
}

export interface LogMark {
  /** The last number handed out; entries are numbered from 1. */
  seq: number;
  /** Entries up to here were deleted on purpose. */
  trimmedThrough: number;
}

/**
 * Append-only logs of JSON text, numbered 1, 2, 3... in append order and deleted from the oldest end: the
 * embedded bus's topics.
 */
export interface AppendLogs {
  /** Appends in order; resolves with the last number once the entries are stored. */
  append(log: string, entries: { key: string; value: string }[], publishedAt: number): Promise<number>;
  /**
   * Up to `limit` entries numbered above `after`, in order, whose values sum to at most `maxChars` characters
   * (the first entry always comes, however long).
   */
  read(log: string, after: number, limit: number, maxChars?: number): Promise<LogEntry[]>;
  /** Null for a log never appended to. */
  mark(log: string): Promise<LogMark | null>;
  /** Every log that has a mark. */
  names(): Promise<string[]>;
  /** Raises the trim mark to `through`, never lowers it. */
  markTrimmed(log: string, through: number): Promise<void>;
  /** The lowest number still held; null when none is. */
  oldest(log: string): Promise<number | null>;
  /** The number of the newest entry published before `at` (epoch ms); null when none was. */
  newestPublishedBefore(log: string, at: number): Promise<number | null>;
  /** Deletes the entries numbered above `after` and up to `through`; answers how many were. */
  deleteRange(log: string, after: number, through: number): Promise<number>;
}

/** Append logs an engine keeps natively, which can take over logs an earlier layout kept as documents. */
export interface NativeAppendLogs extends AppendLogs {
  /**
   * Moves logs kept as document collections into logs, all in one write, and drops those collections:
   * `metaCollection` holds `{ _id: log, seq, trimmedThrough }` and `<entryPrefix><log>` that log's
   * `{ seq, key, value, publishedAt }`. Answers how many logs were moved (0 once done); data it cannot read
   * refuses the move with a message naming it, and nothing is changed.
   */
  adoptDocumentLogs(metaCollection: string, entryPrefix: string): Promise<number>;
}

export interface Store {
  /** Engine name, for logs and health: `embedded` or `mongo`. */
  readonly engine: string;
  collection<T extends Doc>(name: string): Collection<T>;
  /**
   * Append logs the engine keeps natively (the embedded engine: a table per log keyed by the number, entries
   * kept as written); absent elsewhere, where the embedded bus keeps its topics as documents.
   */
  readonly logs?: NativeAppendLogs;
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
