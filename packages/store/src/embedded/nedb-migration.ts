import { existsSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '@gw/platform';
import { isPlainObject, type PlainObject } from '../semantics/values';
import { quoteIdent } from './embedded-collection';
import { encodeDoc } from './json-codec';
import type { SqliteDatabase } from './sqlite-database';

/**
 * One-time import of the previous embedded engine's data: one NeDB datafile per collection (`<name>.db`,
 * JSON lines appended on every change; a later line for an `_id` replaces the earlier, `$$deleted` removes it,
 * `$$date` wraps a date). Each file is read once, its live documents written into the collection's table, and
 * the file renamed to `<name>.db.migrated`; a file that cannot be read stops the start with a message naming
 * it, so no data is ever dropped without a word. Indexes are not carried over: services ensure theirs at start.
 */

const MIGRATIONS_TABLE = '_gw_migrations';
const DATAFILE = /^([A-Za-z0-9_][A-Za-z0-9_.-]*)\.db$/;

function refuse(dataDir: string, file: string, problem: string): Error {
  return new Error(
    `Data dir ${dataDir} holds a datafile of the previous embedded engine that cannot be migrated: ${file}: ${problem}. ` +
      'Nothing was changed. Repair or move that file out of the data dir (its documents are then not carried over) and start again.',
  );
}

function reviveDates(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reviveDates);
  if (!isPlainObject(v)) return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === '$$date' && typeof v.$$date === 'number') return new Date(v.$$date);
  const out: PlainObject = {};
  for (const k of keys) out[k] = reviveDates(v[k]);
  return out;
}

/** The live documents of one datafile, in the order NeDB would have held them. */
function readDatafile(dataDir: string, file: string, log: Logger): PlainObject[] {
  const lines = readFileSync(join(dataDir, file), 'utf8').split('\n');
  const docs = new Map<string, PlainObject>();
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // NeDB appends line by line: only the last line can be torn by a crash, and NeDB itself drops it.
      if (lines.slice(i + 1).every((l) => l.trim() === '')) {
        log.warn({ file, line: i + 1 }, 'migration drops a torn last line of an old datafile (the previous engine did too)');
        return;
      }
      throw refuse(dataDir, file, `line ${i + 1} is not JSON`);
    }
    if (!isPlainObject(parsed)) throw refuse(dataDir, file, `line ${i + 1} is not a document`);
    if ('$$indexCreated' in parsed || '$$indexRemoved' in parsed) return;
    if (typeof parsed._id !== 'string') throw refuse(dataDir, file, `line ${i + 1} has no string _id`);
    if (parsed.$$deleted === true) docs.delete(parsed._id);
    else docs.set(parsed._id, reviveDates(parsed) as PlainObject);
  });
  return [...docs.values()];
}

/** Imports every old datafile in `dataDir` (once) and renames it; throws a named refusal on unreadable data. */
export function migrateNedbDatafiles(db: SqliteDatabase, dataDir: string, log: Logger): void {
  const files = readdirSync(dataDir).filter((f) => DATAFILE.test(f));
  if (files.length === 0) return;
  db.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (file TEXT PRIMARY KEY NOT NULL, documents INTEGER NOT NULL, at INTEGER NOT NULL)`);
  for (const file of files) {
    const done = db.statement(`SELECT documents FROM ${MIGRATIONS_TABLE} WHERE file = ?`).get(file);
    if (!done) {
      const docs = readDatafile(dataDir, file, log);
      const table = quoteIdent(`doc:${DATAFILE.exec(file)![1]}`);
      db.transaction(() => {
        db.exec(`CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY NOT NULL, doc TEXT NOT NULL)`);
        const insert = db.statement(`INSERT INTO ${table} (id, doc) VALUES (?, ?)`);
        for (const doc of docs) insert.run(doc._id as string, encodeDoc(doc));
        db.statement(`INSERT INTO ${MIGRATIONS_TABLE} (file, documents, at) VALUES (?, ?, ?)`).run(file, docs.length, Date.now());
      });
      log.info({ file, documents: docs.length }, 'migrated an old embedded datafile into SQLite');
    }
    // Renamed only after the commit: a crash in between finds the file recorded and just renames it.
    renameSync(join(dataDir, file), join(dataDir, `${file}.migrated`));
    const compactionLeftover = join(dataDir, `${file}~`);
    if (existsSync(compactionLeftover)) renameSync(compactionLeftover, `${compactionLeftover}.migrated`);
  }
}
