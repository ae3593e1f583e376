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
import { compileFilter } from '../semantics/filter';
import { newId, requireStringId } from '../semantics/ids';
import { sortDocuments } from '../semantics/sort';
import { applyUpdate, idFirst, planUpdate, upsertBase } from '../semantics/update';
import { cloneValue, isPlainObject, toStoredValue, valuesEqual, type PlainObject } from '../semantics/values';
import { decodeDoc, encodeDoc } from './json-codec';
import { fieldExpr, isPlainPath, jsonPath, translateFilter, type SqlParam } from './sql-filter';
import { sqlSortPlan } from './sql-sort';
import { isUniqueViolation, type SqliteDatabase } from './sqlite-database';
import type { StatementSync } from 'node:sqlite';

/** Per collection and indexed path: whether any document ever reached an array on it (then SQL cannot match it). */
export const INDEX_PATHS_TABLE = '_gw_index_paths';

interface Row {
  rowid: number;
  doc: PlainObject;
}

interface SingleUpdate {
  before: PlainObject | null;
  after: PlainObject | null;
  modified: boolean;
  upsertedId: string | null;
}

/** The one SELECT every read runs: the filter's SQL, a sort bracket's condition, its order and limit. */
export function selectSql(table: string, filterWhere: string, bracketWhere: string, order: string, limitSql = ''): string {
  return `SELECT rowid, doc FROM ${table} WHERE (${filterWhere}) AND ${bracketWhere} ORDER BY ${order}${limitSql}`;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** True when walking `segments` into `doc` meets an array (MongoDB would then match per element). */
function meetsArray(doc: unknown, segments: string[]): boolean {
  let v = doc;
  for (const s of segments) {
    if (!isPlainObject(v)) return false;
    v = v[s];
    if (Array.isArray(v)) return true;
  }
  return false;
}

/** The update as `[field, value]` pairs when it only `$set`s top-level fields to JSON scalars; otherwise null. */
function topLevelScalarSets(changes: ReturnType<typeof planUpdate>): [string, unknown][] | null {
  const sets: [string, unknown][] = [];
  for (const c of changes) {
    const scalar = c.value === null || typeof c.value === 'string' || typeof c.value === 'boolean' || (typeof c.value === 'number' && Number.isFinite(c.value));
    if (c.operator !== '$set' || c.segments.length !== 1 || c.path === '_id' || !isPlainPath(c.path) || !scalar) return null;
    sets.push([c.path, c.value]);
  }
  return sets;
}

/**
 * A collection on the embedded engine: a table of (`id`, `doc` as JSON text) rows in insertion order, with
 * SQLite expression indexes for `ensureIndex`. Filters run as SQL where they translate exactly (see
 * sql-filter) and through the MongoDB-exact matcher otherwise; every mutation is one synchronous step inside
 * the database's group commit, so a guarded update or a claim is atomic.
 */
export class EmbeddedCollection<T extends Doc> implements Collection<T> {
  private readonly table: string;
  /** Indexed path → an array was seen on it; loaded with the table on first use. */
  private paths: Map<string, boolean> | null = null;

  constructor(
    readonly name: string,
    private readonly db: SqliteDatabase,
  ) {
    this.table = quoteIdent(`doc:${name}`);
  }

  /**
   * A statement that reads the table through `filter`, or (with `page`, the sort of a limited read) for a sorted
   * page; with a scan report configured, each such read's plan is checked once for a scan of the whole table.
   */
  private filtered(sql: string, filter: Filter, page?: Record<string, 1 | -1>): StatementSync {
    const report = this.db.scanReport;
    if (report && (page || Object.keys(filter).length > 0)) report.check(this.name, `doc:${this.name}`, sql, () => this.db.queryPlan(sql), filter, page);
    return this.db.statement(sql);
  }

  async ensureIndex(spec: IndexSpec): Promise<void> {
    const { fields, unique, sparse, indexName } = this.indexOf(spec);
    // A sparse index holds only documents that have one of its fields (JSON null counts as having it).
    const where = sparse ? ` WHERE ${fields.map((f) => `json_type(doc, ${jsonPath(f)}) IS NOT NULL`).join(' OR ')}` : '';
    await this.mutate('ensureIndex', () => {
      const paths = this.ready();
      this.db.exec(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${indexName} ON ${this.table} (${fields.map(fieldExpr).join(', ')})${where}`);
      for (const path of fields) {
        if (path === '_id' || paths.has(path)) continue;
        const prefixes = path.split('.').map((_, i, all) => all.slice(0, i + 1).join('.'));
        const seen = this.db
          .statement(`SELECT EXISTS (SELECT 1 FROM ${this.table} WHERE ${prefixes.map((p) => `json_type(doc, ${jsonPath(p)}) = 'array'`).join(' OR ')}) AS seen`)
          .get() as { seen: number };
        this.db.statement(`INSERT OR REPLACE INTO ${INDEX_PATHS_TABLE} (collection, path, array_seen) VALUES (?, ?, ?)`).run(this.name, path, seen.seen);
        paths.set(path, seen.seen === 1);
      }
    });
  }

  async dropIndex(spec: IndexSpec): Promise<void> {
    const { fields, indexName } = this.indexOf(spec);
    await this.mutate('dropIndex', () => {
      const paths = this.ready();
      this.db.exec(`DROP INDEX IF EXISTS ${indexName}`);
      // A path no index covers any more is no longer decided in SQL (nor watched for arrays).
      const remaining = (this.db.statement(`SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`)
        .all(`doc:${this.name}`) as { sql: string }[]).map((r) => r.sql);
      for (const path of fields) {
        if (path === '_id' || remaining.some((sql) => sql.includes(jsonPath(path)))) continue;
        this.db.statement(`DELETE FROM ${INDEX_PATHS_TABLE} WHERE collection = ? AND path = ?`).run(this.name, path);
        paths.delete(path);
      }
    });
  }

  private indexOf(spec: IndexSpec) {
    const fields = Object.keys(spec.fields);
    if (fields.length === 0) throw new Error('An index needs at least one field');
    const odd = fields.find((f) => !isPlainPath(f));
    if (odd) throw new Error(`The embedded engine cannot index '${odd}' (letters, digits, _ and - per segment)`);
    const unique = spec.unique ?? false;
    const sparse = spec.sparse ?? false;
    const indexName = quoteIdent(`ix:${this.name}:${fields.join(',')}${unique ? ':unique' : ''}${sparse ? ':sparse' : ''}`);
    return { fields, unique, sparse, indexName };
  }

  async insertOne(doc: T): Promise<T> {
    const stored = this.toStoredDoc(doc);
    await this.mutate('insertOne', () => this.insert(stored));
    return stored as T;
  }

  async insertMany(docs: T[], opts: { ignoreDuplicates?: boolean } = {}): Promise<InsertManyResult> {
    const stored = docs.map((d) => this.toStoredDoc(d));
    if (stored.length === 0) return { insertedIds: [], duplicateIds: [] };
    return this.mutate('insertMany', () => this.insertStored(stored, opts.ignoreDuplicates ?? false));
  }

  /** Without `ignoreDuplicates` the first duplicate throws, and the write it is part of rolls back whole. */
  private insertStored(stored: PlainObject[], ignoreDuplicates: boolean): InsertManyResult {
    const result: InsertManyResult = { insertedIds: [], duplicateIds: [] };
    for (const doc of stored) {
      if (this.insert(doc, ignoreDuplicates)) result.insertedIds.push(doc._id as string);
      else result.duplicateIds.push(doc._id as string);
    }
    return result;
  }

  async findOne(filter: Filter, opts: Omit<FindOptions, 'limit'> = {}): Promise<T | null> {
    const [doc] = await this.find(filter, { ...opts, limit: 1 });
    return doc ?? null;
  }

  async find(filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    const skip = opts.skip ?? 0;
    if (!Number.isInteger(skip) || skip < 0) throw new Error('skip must be a non-negative integer');
    // As in MongoDB, limit 0 means no limit and a negative limit counts like a positive one.
    const limit = opts.limit ? Math.abs(opts.limit) : Infinity;
    return this.select(filter, opts.sort, skip, limit).map((r) => r.doc as T);
  }

  async count(filter: Filter): Promise<number> {
    this.ready();
    const sql = translateFilter(filter, this.translatable);
    if (sql.exact) {
      compileFilter(filter); // refuses what MongoDB would refuse, as the matcher path does
      return (this.filtered(`SELECT count(*) AS n FROM ${this.table} WHERE ${sql.where}`, filter).get(...sql.params) as { n: number }).n;
    }
    return this.select(filter, undefined, 0, Infinity).length;
  }

  async updateOne(filter: Filter, update: Update, opts: UpdateOptions = {}): Promise<UpdateResult> {
    const r = await this.updateSingle('updateOne', filter, update, opts.upsert ?? false);
    return { matched: r.before ? 1 : 0, modified: r.modified ? 1 : 0, upsertedId: r.upsertedId };
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    const changes = planUpdate(update);
    const scalarSets = topLevelScalarSets(changes);
    return this.mutate('updateMany', () => {
      const inSql = scalarSets && this.updateInSql(filter, scalarSets);
      if (inSql) return inSql;
      const rows = this.select(filter, undefined, 0, Infinity);
      let modified = 0;
      for (const { rowid, doc } of rows) {
        const next = applyUpdate(cloneValue(doc), changes, false);
        if (valuesEqual(next, doc)) continue;
        this.replace(rowid, next);
        modified++;
      }
      return { matched: rows.length, modified, upsertedId: null };
    });
  }

  async findOneAndUpdate(filter: Filter, update: Update, opts: FindOneAndUpdateOptions = {}): Promise<T | null> {
    const r = await this.updateSingle('findOneAndUpdate', filter, update, opts.upsert ?? false);
    return ((opts.returnDocument === 'before' ? r.before : r.after) as T | null) ?? null;
  }

  async deleteOne(filter: Filter): Promise<number> {
    return this.mutate('deleteOne', () => {
      const [row] = this.select(filter, undefined, 0, 1);
      if (!row) return 0;
      return Number(this.db.statement(`DELETE FROM ${this.table} WHERE rowid = ?`).run(row.rowid).changes);
    });
  }

  async deleteMany(filter: Filter): Promise<number> {
    return this.mutate('deleteMany', () => {
      this.ready();
      const sql = translateFilter(filter, this.translatable);
      if (sql.exact) {
        compileFilter(filter);
        return Number(this.filtered(`DELETE FROM ${this.table} WHERE ${sql.where}`, filter).run(...sql.params).changes);
      }
      const del = this.db.statement(`DELETE FROM ${this.table} WHERE rowid = ?`);
      const rows = this.select(filter, undefined, 0, Infinity);
      for (const row of rows) del.run(row.rowid);
      return rows.length;
    });
  }

  /**
   * `$set` of top-level scalar fields on every match of a filter SQL decides exactly, done by SQLite's
   * `json_set` without reading a document into JS (a bulk state mark, say). Null when it does not apply.
   * As in MongoDB, a document whose fields already hold the values matches but is not modified.
   */
  private updateInSql(filter: Filter, sets: [string, unknown][]): UpdateResult | null {
    this.ready();
    const sql = translateFilter(filter, this.translatable);
    if (!sql.exact) return null;
    compileFilter(filter); // refuses what MongoDB would refuse, as the matcher path does
    const matched = (this.filtered(`SELECT count(*) AS n FROM ${this.table} WHERE ${sql.where}`, filter).get(...sql.params) as { n: number }).n;
    if (matched === 0) return { matched: 0, modified: 0, upsertedId: null };
    const values = sets.map(([, v]) => JSON.stringify(v));
    const assignments = sets.map(([field]) => `${jsonPath(field)}, json(?)`).join(', ');
    const unchanged = sets.map(([field]) => `(doc -> ${jsonPath(field)}) IS ?`).join(' AND ');
    const res = this.filtered(`UPDATE ${this.table} SET doc = json_set(doc, ${assignments}) WHERE (${sql.where}) AND NOT (${unchanged})`, filter)
      .run(...values, ...sql.params, ...values);
    return { matched, modified: Number(res.changes), upsertedId: null };
  }

  /** The first match updated in place, or an upserted document; one atomic step. */
  private updateSingle(operation: string, filter: Filter, update: Update, upsert: boolean): Promise<SingleUpdate> {
    const changes = planUpdate(update);
    return this.mutate(operation, () => this.updateSingleNow(filter, changes, upsert));
  }

  private updateSingleNow(filter: Filter, changes: ReturnType<typeof planUpdate>, upsert: boolean): SingleUpdate {
    const [current] = this.select(filter, undefined, 0, 1);
    if (current) {
      const next = applyUpdate(cloneValue(current.doc), changes, false);
      const modified = !valuesEqual(next, current.doc);
      if (modified) this.replace(current.rowid, next);
      return { before: current.doc, after: next, modified, upsertedId: null };
    }
    if (!upsert) return { before: null, after: null, modified: false, upsertedId: null };
    const created = applyUpdate(upsertBase(filter), changes, true);
    if (created._id === undefined || created._id === null) created._id = newId();
    requireStringId(created, this.name);
    const stored = idFirst(created);
    this.insert(stored);
    return { before: null, after: cloneValue(stored), modified: false, upsertedId: stored._id as string };
  }

  /** Matching rows in order: SQL narrows and orders (see sqlSortPlan), the matcher decides. */
  private select(filter: Filter, sort: Record<string, 1 | -1> | undefined, skip: number, limit: number): Row[] {
    this.ready();
    const sql = translateFilter(filter, this.translatable);
    const matches = compileFilter(filter);
    const keys = Object.entries(sort ?? {});
    for (const [path, direction] of keys) if (direction !== 1 && direction !== -1) throw new Error(`Sort direction for '${path}' must be 1 or -1`);
    const plan = sqlSortPlan(keys, sql.typed, this.translatable, sql.ranged);
    // A sorted page of the whole collection is checked too: without an index of its sort, SQLite sorts every row.
    const page = keys.length > 0 && Number.isFinite(limit) ? sort : undefined;
    const read = (where: string, order: string, limitSql = '', extra: SqlParam[] = []) =>
      this.filtered(selectSql(this.table, sql.where, where, order, limitSql), filter, page).iterate(...sql.params, ...extra) as Iterable<{ rowid: number; doc: string }>;
    const collect = (raws: Iterable<{ rowid: number; doc: string }>, wanted: number): Row[] => {
      const rows: Row[] = [];
      for (const raw of raws) {
        const doc = decodeDoc(raw.doc, this.name);
        if (!sql.exact && !matches(doc)) continue;
        rows.push({ rowid: raw.rowid, doc });
        if (rows.length >= wanted) break;
      }
      return rows;
    };
    if (!plan) return this.sortRows(collect(read('1', 'rowid'), Infinity), sort!).slice(skip, skip + limit);
    // One bracket and an exact filter: SQLite skips and limits.
    if (plan.length === 1 && sql.exact && Number.isFinite(limit)) return collect(read(plan[0].where, plan[0].order, ' LIMIT ? OFFSET ?', [limit, skip]), limit);
    const wanted = skip + limit;
    const rows: Row[] = [];
    for (const bracket of plan) {
      const remaining = wanted - rows.length;
      const limitSql = sql.exact && !bracket.inMemory && Number.isFinite(remaining) ? ' LIMIT ?' : '';
      const found = collect(read(bracket.where, bracket.order, limitSql, limitSql ? [remaining] : []), bracket.inMemory ? Infinity : remaining);
      for (const row of bracket.inMemory ? this.sortRows(found, sort!).slice(0, remaining) : found) rows.push(row);
      if (rows.length >= wanted) break;
    }
    return rows.slice(skip, skip + limit);
  }

  private sortRows(rows: Row[], sort: Record<string, 1 | -1>): Row[] {
    const byDoc = new Map(rows.map((r) => [r.doc, r]));
    return sortDocuments(rows.map((r) => r.doc), sort).map((d) => byDoc.get(d)!);
  }

  private readonly translatable = (path: string): boolean => path === '_id' || (this.paths!.get(path) === false && isPlainPath(path));

  /** Inserts a row; with `ignoreDuplicates` a unique violation answers false instead of throwing. */
  private insert(doc: PlainObject, ignoreDuplicates = false): boolean {
    this.ready();
    const r = this.db.statement(`INSERT ${ignoreDuplicates ? 'OR IGNORE ' : ''}INTO ${this.table} (id, doc) VALUES (?, ?)`).run(doc._id as string, encodeDoc(doc));
    if (r.changes === 0) return false;
    this.noteArrays(doc);
    return true;
  }

  private replace(rowid: number, doc: PlainObject): void {
    this.db.statement(`UPDATE ${this.table} SET doc = ? WHERE rowid = ?`).run(encodeDoc(doc), rowid);
    this.noteArrays(doc);
  }

  /** Marks indexed paths this document reaches an array on: queries on them go to the matcher from now on. */
  private noteArrays(doc: PlainObject): void {
    for (const [path, seen] of this.paths!) {
      if (seen || !meetsArray(doc, path.split('.'))) continue;
      this.db.statement(`UPDATE ${INDEX_PATHS_TABLE} SET array_seen = 1 WHERE collection = ? AND path = ?`).run(this.name, path);
      this.paths!.set(path, true);
    }
  }

  /** Creates the table on first use and loads what is known about its indexed paths. */
  private ready(): Map<string, boolean> {
    this.db.assertOpen();
    if (!this.paths) {
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`);
      const rows = this.db.statement(`SELECT path, array_seen FROM ${INDEX_PATHS_TABLE} WHERE collection = ?`).all(this.name) as { path: string; array_seen: number }[];
      this.paths = new Map(rows.map((r) => [r.path, r.array_seen === 1]));
    }
    return this.paths;
  }

  private toStoredDoc(doc: T): PlainObject {
    requireStringId(doc, this.name);
    return idFirst(toStoredValue(doc) as PlainObject);
  }

  /** Runs a write in the next group commit, with SQLite's unique violations as `DuplicateKeyError`. */
  private async mutate<R>(operation: string, task: () => R): Promise<R> {
    try {
      return await this.db.write(task, `${this.name}.${operation}`);
    } catch (err) {
      if (isUniqueViolation(err)) throw new DuplicateKeyError(this.name, (err as Error).message);
      throw err;
    }
  }
}
