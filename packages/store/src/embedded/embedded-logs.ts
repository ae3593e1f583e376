import type { LogEntry, LogMark, NativeAppendLogs } from '../port';
import { INDEX_PATHS_TABLE, quoteIdent } from './embedded-collection';
import { decodeDoc } from './json-codec';
import type { SqliteDatabase } from './sqlite-database';

/** Each log's last number and trim mark. */
export const LOG_MARKS_TABLE = '_gw_log_marks';

const LOG_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

function assertLogName(name: string): void {
  if (!LOG_NAME.test(name)) throw new Error(`Invalid log name '${name}'`);
}

const docTable = (collection: string) => quoteIdent(`doc:${collection}`);
const logTable = (log: string) => quoteIdent(`log:${log}`);

/**
 * The embedded engine's append logs: a table per log (`log:<name>`) whose integer primary key is the entry's
 * number, so an append writes the entry's text as given plus one small time index, and a read is a range
 * scan of the table itself. The numbers come from the marks table in the same transaction as the entries, so
 * an append is atomic: no gap even if the process dies.
 */
export class EmbeddedLogs implements NativeAppendLogs {
  /** Logs whose table exists (created on first use by this connection). */
  private readonly ready = new Set<string>();

  constructor(private readonly db: SqliteDatabase) {
    db.exec(`CREATE TABLE IF NOT EXISTS ${LOG_MARKS_TABLE} (name TEXT PRIMARY KEY NOT NULL, seq INTEGER NOT NULL, trimmed_through INTEGER NOT NULL)`);
  }

  async append(log: string, entries: { key: string; value: string }[], publishedAt: number): Promise<number> {
    const table = this.table(log);
    const n = entries.length;
    if (n === 0) throw new Error('An append needs at least one entry');
    return this.db.write(() => {
      const { seq } = this.db.statement(
        `INSERT INTO ${LOG_MARKS_TABLE} (name, seq, trimmed_through) VALUES (?, ?, 0) ON CONFLICT (name) DO UPDATE SET seq = seq + excluded.seq RETURNING seq`,
      ).get(log, n) as { seq: number };
      const insert = this.db.statement(`INSERT INTO ${table} (seq, key, value, published_at) VALUES (?, ?, ?, ?)`);
      entries.forEach((e, i) => insert.run(seq - n + 1 + i, e.key, e.value, publishedAt));
      return seq;
    }, `append ${log}`);
  }

  async read(log: string, after: number, limit: number, maxChars = Infinity): Promise<LogEntry[]> {
    const table = this.table(log);
    const rows = this.db.statement(`SELECT seq, key, value, published_at FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`)
      .iterate(after, limit) as Iterable<{ seq: number; key: string; value: string; published_at: number }>;
    const entries: LogEntry[] = [];
    let chars = 0;
    // Row by row, so entries past the budget are never read into memory (at most the one that crosses it).
    for (const r of rows) {
      chars += r.value.length;
      if (entries.length > 0 && chars > maxChars) break;
      entries.push({ seq: r.seq, key: r.key, value: r.value, publishedAt: r.published_at });
    }
    return entries;
  }

  async mark(log: string): Promise<LogMark | null> {
    assertLogName(log);
    const row = this.db.statement(`SELECT seq, trimmed_through FROM ${LOG_MARKS_TABLE} WHERE name = ?`).get(log) as
      { seq: number; trimmed_through: number } | undefined;
    return row ? { seq: row.seq, trimmedThrough: row.trimmed_through } : null;
  }

  async names(): Promise<string[]> {
    this.db.assertOpen();
    return (this.db.statement(`SELECT name FROM ${LOG_MARKS_TABLE} ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
  }

  async markTrimmed(log: string, through: number): Promise<void> {
    assertLogName(log);
    await this.db.write(() => {
      this.db.statement(`UPDATE ${LOG_MARKS_TABLE} SET trimmed_through = max(trimmed_through, ?) WHERE name = ?`).run(through, log);
    }, `trim mark ${log}`);
  }

  async oldest(log: string): Promise<number | null> {
    const row = this.db.statement(`SELECT min(seq) AS seq FROM ${this.table(log)}`).get() as { seq: number | null };
    return row.seq;
  }

  async newestPublishedBefore(log: string, at: number): Promise<number | null> {
    const row = this.db.statement(`SELECT seq FROM ${this.table(log)} WHERE published_at < ? ORDER BY published_at DESC, seq DESC LIMIT 1`).get(at) as
      { seq: number } | undefined;
    return row?.seq ?? null;
  }

  async deleteRange(log: string, after: number, through: number): Promise<number> {
    const table = this.table(log);
    return this.db.write(() => Number(this.db.statement(`DELETE FROM ${table} WHERE seq > ? AND seq <= ?`).run(after, through).changes), `trim ${log}`);
  }

  async adoptDocumentLogs(metaCollection: string, entryPrefix: string): Promise<number> {
    return this.db.write(() => this.adoptNow(metaCollection, entryPrefix), `adopt ${metaCollection}`);
  }

  private adoptNow(metaCollection: string, entryPrefix: string): number {
    const tables = new Set((this.db.statement(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name));
    const legacy = new Map<string, { seq: number; trimmedThrough: number }>();
    const metaTable = `doc:${metaCollection}`;
    if (tables.has(metaTable)) {
      for (const row of this.db.statement(`SELECT doc FROM ${docTable(metaCollection)}`).all() as { doc: string }[]) {
        let doc: Record<string, unknown>;
        try {
          doc = decodeDoc(row.doc, metaCollection);
        } catch {
          throw this.refusal(metaCollection, `a mark that is not JSON: ${row.doc.slice(0, 200)}`);
        }
        const { _id: name, seq, trimmedThrough } = doc;
        if (typeof name !== 'string' || !LOG_NAME.test(name) || !Number.isSafeInteger(seq) || !Number.isSafeInteger(trimmedThrough ?? 0)) {
          throw this.refusal(metaCollection, `a mark that is not { _id, seq, trimmedThrough }: ${row.doc.slice(0, 200)}`);
        }
        legacy.set(name, { seq: seq as number, trimmedThrough: (trimmedThrough ?? 0) as number });
      }
    }
    // Entries whose mark is missing keep their numbers; the next number follows the highest.
    const prefix = `doc:${entryPrefix}`;
    for (const table of tables) {
      if (!table.startsWith(prefix)) continue;
      const name = table.slice(prefix.length);
      if (!LOG_NAME.test(name)) throw this.refusal(`${entryPrefix}${name}`, 'a log name the engine cannot keep');
      if (!legacy.has(name)) legacy.set(name, { seq: 0, trimmedThrough: 0 });
    }
    for (const [name, mark] of legacy) {
      const entries = `${entryPrefix}${name}`;
      // Not cached as ready: a refused move rolls the table back with everything else.
      this.createTable(name);
      const target = logTable(name);
      if (tables.has(`doc:${entries}`)) {
        try {
          this.db.exec(
            `INSERT INTO ${target} (seq, key, value, published_at) SELECT json_extract(doc, '$.seq'), json_extract(doc, '$.key'), ` +
              `json_extract(doc, '$.value'), json_extract(doc, '$.publishedAt') FROM ${docTable(entries)}`,
          );
        } catch (err) {
          throw this.refusal(entries, `an entry that is not { seq, key, value, publishedAt } (${(err as Error).message})`);
        }
        const highest = (this.db.statement(`SELECT max(seq) AS seq FROM ${target}`).get() as { seq: number | null }).seq ?? 0;
        mark.seq = Math.max(mark.seq, highest);
        this.dropCollection(entries);
      }
      this.db.statement(
        `INSERT INTO ${LOG_MARKS_TABLE} (name, seq, trimmed_through) VALUES (?, ?, ?) ` +
          'ON CONFLICT (name) DO UPDATE SET seq = max(seq, excluded.seq), trimmed_through = max(trimmed_through, excluded.trimmed_through)',
      ).run(name, mark.seq, mark.trimmedThrough);
    }
    if (tables.has(metaTable)) this.dropCollection(metaCollection);
    return legacy.size;
  }

  private dropCollection(name: string): void {
    this.db.exec(`DROP TABLE ${docTable(name)}`);
    this.db.statement(`DELETE FROM ${INDEX_PATHS_TABLE} WHERE collection = ?`).run(name);
  }

  private refusal(collection: string, problem: string): Error {
    return new Error(
      `The store at ${this.db.path} holds logs of the earlier document layout that cannot be moved: ${collection}: ${problem}. ` +
        'Nothing was changed. Repair or remove that collection and start again.',
    );
  }

  /** The log's table, created on first use by this connection. */
  private table(log: string): string {
    assertLogName(log);
    this.db.assertOpen();
    if (!this.ready.has(log)) {
      this.createTable(log);
      this.ready.add(log);
    }
    return logTable(log);
  }

  private createTable(log: string): void {
    const table = logTable(log);
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${table} (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL, published_at INTEGER NOT NULL)`);
    this.db.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`ix:log:${log}:published_at`)} ON ${table} (published_at)`);
  }
}
