import Datastore from '@seald-io/nedb';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createLogger } from '@gw/platform';
import { DuplicateKeyError, type Doc } from '../port';
import { createEmbeddedStore } from './embedded-store';
import { SqliteDatabase } from './sqlite-database';
import { selectSql } from './embedded-collection';
import { translateFilter } from './sql-filter';
import { sqlSortPlan } from './sql-sort';
import { WalCheckpointer } from './wal-checkpointer';

/** What only the embedded engine has: its database file, migration of old datafiles, SQL translation limits. */
describe('embedded store on SQLite', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-store-embedded-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a slow write transaction is logged with the write that took longest, by its label', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger(null, 'warn', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const db = new SqliteDatabase(join(dataDir, 'store.sqlite'), 'normal', logger);
    db.exec('CREATE TABLE t (n INTEGER)');
    // Three writes in one group commit; the labelled one holds the transaction for 600 ms.
    await Promise.all([
      db.write(() => db.statement('INSERT INTO t VALUES (1)').run(), 't.insert'),
      db.write(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600), 'append test-topic'),
      db.write(() => db.statement('INSERT INTO t VALUES (2)').run(), 't.insert'),
    ]);
    await db.close();
    const slow = lines.filter((l) => l.msg === 'slow write transaction on the embedded store');
    expect(slow).toHaveLength(1);
    expect(slow[0]).toMatchObject({ writes: 3, slowestWrite: 'append test-topic' });
    expect(slow[0].slowestWriteMs).toBeGreaterThanOrEqual(590);
    expect(slow[0].heldMs).toBeGreaterThanOrEqual(slow[0].slowestWriteMs as number);
  });

  it('keeps one database file per data dir, readable after a reopen', async () => {
    const store = createEmbeddedStore({ dataDir });
    await store.collection<Doc & { n: number }>('a').insertOne({ _id: 'x', n: 1 });
    await store.collection<Doc & { n: number }>('b').insertOne({ _id: 'y', n: 2 });
    await store.close();
    expect((await readdir(dataDir)).filter((f) => !f.endsWith('-wal') && !f.endsWith('-shm'))).toEqual(['store.sqlite']);
    const reopened = createEmbeddedStore({ dataDir });
    expect(await reopened.collection('b').findOne({ _id: 'y' })).toEqual({ _id: 'y', n: 2 });
    await reopened.close();
  });

  it('migrates a data dir the previous engine wrote, once, and renames its datafiles', async () => {
    // Written by the previous engine itself: appended inserts, updates, a delete, an index and dates.
    const old = new Datastore({ filename: join(dataDir, 'ledger.db') });
    await old.loadDatabaseAsync();
    await old.ensureIndexAsync({ fieldName: 'account', unique: false });
    await old.insertAsync([
      { _id: 'e1', account: 'a', amount: 5, at: new Date(1_000) },
      { _id: 'e2', account: 'a', amount: 7, at: new Date(2_000) },
      { _id: 'e3', account: 'b', amount: 9, at: new Date(3_000) },
    ]);
    await old.updateAsync({ _id: 'e2' }, { $set: { amount: 8 } }, {});
    await old.removeAsync({ _id: 'e3' }, {});
    expect((await readFile(join(dataDir, 'ledger.db'), 'utf8')).trim().split('\n').length).toBeGreaterThan(3);

    const store = createEmbeddedStore({ dataDir });
    const ledger = store.collection<Doc & { account: string; amount: number; at: Date }>('ledger');
    expect(await ledger.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'e1', account: 'a', amount: 5, at: new Date(1_000) },
      { _id: 'e2', account: 'a', amount: 8, at: new Date(2_000) },
    ]);
    expect(await readdir(dataDir)).toEqual(expect.arrayContaining(['ledger.db.migrated', 'store.sqlite']));
    expect(await readdir(dataDir)).not.toContain('ledger.db');
    await ledger.deleteOne({ _id: 'e1' });
    await store.close();

    const reopened = createEmbeddedStore({ dataDir });
    expect(await reopened.collection('ledger').count({})).toBe(1);
    await reopened.close();
  });

  it('refuses a data dir whose old datafile it cannot read, naming the dir and the file, and changes nothing', async () => {
    const content = `${JSON.stringify({ _id: 'k1', v: 1 })}\nnot json\n${JSON.stringify({ _id: 'k2', v: 2 })}\n`;
    await writeFile(join(dataDir, 'keys.db'), content);
    expect(() => createEmbeddedStore({ dataDir })).toThrow(new RegExp(`${dataDir}.*keys\\.db: line 2 is not JSON`));
    expect(await readFile(join(dataDir, 'keys.db'), 'utf8')).toBe(content);
  });

  it('keeps answering exactly on an indexed field once a document holds an array there', async () => {
    const store = createEmbeddedStore({ dataDir });
    const items = store.collection<Doc & { tag?: unknown; n?: unknown }>('items');
    await items.ensureIndex({ fields: { tag: 1 } });
    await items.ensureIndex({ fields: { n: 1 } });
    await items.insertMany([
      { _id: '1', tag: 'a', n: 1 },
      { _id: '2', tag: 'b', n: true },
      { _id: '3', tag: 'a', n: '1' },
      { _id: '4', n: null },
    ]);
    // Types stay apart as in MongoDB: 1, true and '1' are three different values.
    expect((await items.find({ n: 1 })).map((d) => d._id)).toEqual(['1']);
    expect((await items.find({ n: true })).map((d) => d._id)).toEqual(['2']);
    expect((await items.find({ n: { $gte: 0 } })).map((d) => d._id)).toEqual(['1']);
    expect((await items.find({ tag: null })).map((d) => d._id)).toEqual(['4']);
    expect((await items.find({ tag: { $gt: 'a' } }, { sort: { tag: -1 } })).map((d) => d._id)).toEqual(['2']);

    await items.insertOne({ _id: '5', tag: ['x', 'a'] });
    expect((await items.find({ tag: 'a' }, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(['1', '3', '5']);
    expect(await items.count({ tag: 'a' })).toBe(3);
    expect(await items.deleteMany({ tag: 'x' })).toBe(1);
    await store.close();
  });

  it('answers a sorted read with a limit, and an $or, from the index without reading the rows it does not return', async () => {
    const store = createEmbeddedStore({ dataDir });
    type Job = Doc & { kind: string; status: string; at?: unknown };
    const jobs = store.collection<Job>('jobs');
    await jobs.ensureIndex({ fields: { kind: 1, status: 1, at: 1 } });
    const docs: Job[] = Array.from({ length: 2_000 }, (_, i) => ({ _id: `j${i}`, kind: 'chat', status: i % 100 === 7 ? 'queued' : 'done', at: i }));
    docs.push({ _id: 'no-at', kind: 'chat', status: 'done' }, { _id: 'text-at', kind: 'chat', status: 'done', at: 'x' });
    await jobs.insertMany(docs);
    // A row that cannot be decoded shows whether a read touched it: JSON5, which SQLite's indexes read and
    // JSON.parse refuses. Reading every match to sort them in memory would throw on it.
    const side = new DatabaseSync(join(dataDir, 'store.sqlite'));
    try {
      side.exec('PRAGMA busy_timeout = 5000');
      side.exec(`UPDATE "doc:jobs" SET doc = '{_id: "j1500", kind: "chat", status: "done", at: 1500}' WHERE id = 'j1500'`);
    } finally {
      side.close();
    }
    const ids = (found: Job[]) => found.map((d) => d._id);
    // No bound on `at`: read one type at a time, missing first, so nothing past the limit is read.
    expect(ids(await jobs.find({ kind: 'chat' }, { sort: { at: 1 }, limit: 3 }))).toEqual(['no-at', 'j0', 'j1']);
    expect(ids(await jobs.find({ kind: 'chat' }, { sort: { at: -1 }, limit: 2 }))).toEqual(['text-at', 'j1999']);
    expect(ids(await jobs.find({ kind: 'chat', status: 'queued' }, { sort: { at: 1, _id: 1 }, limit: 2 }))).toEqual(['j7', 'j107']);
    // An $or of exact branches is exact: SQL selects, nothing else is decoded.
    const either = { kind: 'chat', $or: [{ status: 'queued', at: { $gte: 1900 } }, { at: { $lt: 2 } }] };
    expect(ids(await jobs.find(either, { sort: { at: 1 } }))).toEqual(['j0', 'j1', 'j1907']);
    expect(await jobs.count(either)).toBe(3);
    // The control: a read that has to look at every row does reach the unreadable one.
    await expect(jobs.find({ kind: 'chat', status: { $ne: 'queued' } })).rejects.toThrow(/not JSON/);
    await store.close();
  });

  it('serves an equality on the field of a sparse index from that index, which holds only the documents that have it', async () => {
    const store = createEmbeddedStore({ dataDir });
    const calls = store.collection<Doc & { rare_id?: string }>('calls');
    await calls.ensureIndex({ fields: { rare_id: 1 }, sparse: true });
    await calls.insertMany([...Array.from({ length: 500 }, (_, i) => ({ _id: `c${i}` })), { _id: 'rare', rare_id: 'ext-1' }]);
    expect((await calls.find({ rare_id: 'ext-1' })).map((d) => d._id)).toEqual(['rare']);
    const { where, params } = translateFilter({ rare_id: 'ext-1' }, () => true);
    const side = new DatabaseSync(join(dataDir, 'store.sqlite'));
    try {
      const plan = side.prepare(`EXPLAIN QUERY PLAN SELECT id, doc FROM "doc:calls" WHERE ${where}`).all(...params) as { detail: string }[];
      expect(plan.map((r) => r.detail)).toEqual([expect.stringMatching(/^SEARCH doc:calls USING INDEX ix:calls:rare_id:sparse \(<expr>=\?\)$/)]);
      expect(side.prepare(`SELECT count(*) AS n FROM "doc:calls" INDEXED BY "ix:calls:rare_id:sparse" WHERE ${where}`).get(...params)).toEqual({ n: 1 });
    } finally {
      side.close();
    }
    await store.close();
  });

  it('serves a boolean equality, an $or of two, and an unsorted range from their indexes, not a scan of the table', async () => {
    type Task = Doc & { pending?: boolean | number; retry?: boolean; due: number };
    const store = createEmbeddedStore({ dataDir });
    const tasks = store.collection<Task>('tasks');
    for (const field of ['pending', 'retry', 'due']) await tasks.ensureIndex({ fields: { [field]: 1 } });
    await tasks.insertMany([
      ...Array.from({ length: 500 }, (_, i) => ({ _id: `t${i}`, pending: false, due: 1_000 + i })),
      { _id: 'yes', pending: true, due: 7 }, { _id: 'one', pending: 1, due: 8 }, { _id: 'again', retry: true, due: 2_000 },
    ]);
    // What each read answers: true is not the number 1, and insertion order holds without a sort.
    const ids = async (filter: Record<string, unknown>) => (await tasks.find(filter)).map((d) => d._id);
    expect(await ids({ pending: true })).toEqual(['yes']);
    expect(await ids({ pending: 1 })).toEqual(['one']);
    expect(await ids({ $or: [{ pending: true }, { retry: true }] })).toEqual(['yes', 'again']);
    expect(await ids({ due: { $lt: 1_002 } })).toEqual(['t0', 't1', 'yes', 'one']);
    // How SQLite runs the statement each of those reads runs.
    const side = new DatabaseSync(join(dataDir, 'store.sqlite'));
    try {
      for (const filter of [{ pending: true }, { $or: [{ pending: true }, { retry: true }] }, { due: { $lt: 1_002 } }]) {
        const sql = translateFilter(filter, () => true);
        const [bracket] = sqlSortPlan([], sql.typed, () => true, sql.ranged)!;
        const plan = (side.prepare(`EXPLAIN QUERY PLAN ${selectSql('"doc:tasks"', sql.where, bracket.where, bracket.order)}`).all(...sql.params) as { detail: string }[])
          .map((r) => r.detail);
        expect(plan.filter((d) => d.startsWith('SCAN'))).toEqual([]);
        expect(plan.some((d) => /^SEARCH doc:tasks USING INDEX ix:tasks:(pending|retry|due)/.test(d))).toBe(true);
      }
    } finally {
      side.close();
    }
    await store.close();
  });

  it('with a scan report, writes down each filtered read and sorted page that scans the whole table, once', async () => {
    type Call = Doc & { account: string; model: string; at: number };
    const reportFile = join(dataDir, 'scans.jsonl');
    const store = createEmbeddedStore({ dataDir: join(dataDir, 'store'), scanReportFile: reportFile });
    const calls = store.collection<Call>('calls');
    await calls.ensureIndex({ fields: { account: 1 } });
    await calls.ensureIndex({ fields: { at: 1 } });
    await calls.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: `c${i}`, account: `a${i % 5}`, model: `m${i % 3}`, at: i })));
    const reported = async () => (existsSync(reportFile) ? (await readFile(reportFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { collection: string; filter: unknown; sort?: unknown; sql: string; plan: string[] }) : []);
    // Served by an index, or reading everything on purpose: nothing to report.
    expect(await calls.find({ account: 'a1' })).toHaveLength(10);
    expect(await calls.count({ at: { $gte: 40 } })).toBe(10);
    expect((await calls.find({}, { sort: { at: 1 }, limit: 3 })).map((c) => c.at)).toEqual([0, 1, 2]);
    // Newest first: the bracket of booleans and objects, read first, is searched in the index too.
    expect((await calls.find({}, { sort: { at: -1 }, limit: 3 })).map((c) => c.at)).toEqual([49, 48, 47]);
    expect(await calls.find({})).toHaveLength(50);
    expect(await reported()).toEqual([]);
    // No index of `model`: each of these visits every row; a read of the same shape is reported once.
    expect(await calls.find({ model: 'm1' })).toHaveLength(17);
    expect(await calls.find({ model: 'm2' })).toHaveLength(16);
    expect(await calls.count({ model: 'm0' })).toBe(17);
    expect(await calls.updateMany({ model: 'm0', account: { $ne: 'moved' } }, { $set: { account: 'moved' } })).toMatchObject({ matched: 17 });
    expect(await calls.find({}, { sort: { model: 1 }, limit: 3 })).toHaveLength(3);
    const scans = await reported();
    expect(scans.map((s) => [s.filter, s.sort])).toEqual([
      [{ model: 'string' }, undefined],
      [{ model: 'string', account: { $ne: 'string' } }, undefined],
      [{}, { model: 1 }],
    ]);
    expect(scans.every((s) => s.collection === 'calls' && s.plan.includes('SCAN doc:calls'))).toBe(true);
    // Values never reach the report, only their types; nor does an id used as a field name.
    expect(JSON.stringify(scans)).not.toMatch(/m0|m1|m2|moved/);
    const hash = 'ab12'.repeat(16);
    expect(await calls.find({ [`spend.${hash}`]: { $exists: true } })).toEqual([]);
    expect((await reported()).at(-1)!.filter).toEqual({ 'spend.<id>': { $exists: 'boolean' } });
    expect(await readFile(reportFile, 'utf8')).not.toContain(hash);
    await store.close();
  });

  it('commits many concurrent writes together and each one alone fails on its own', async () => {
    const store = createEmbeddedStore({ dataDir });
    const docs = store.collection<Doc & { n: number }>('docs');
    const results = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => docs.insertOne({ _id: `d${i % 150}`, n: i })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(150);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(50);
    expect(await docs.count({})).toBe(150);
    await store.close();
  });

  it('keeps the WAL small with a checkpointer thread, where without one it grows until the commit-time checkpoint', async () => {
    const body = 'x'.repeat(2_000);
    // 4 MB in 200 commits: well under the 10,000-page (40 MB) threshold of the commit-time checkpoint.
    const writeAndMeasure = async (dir: string, checkpointer?: WalCheckpointer) => {
      const store = createEmbeddedStore({ dataDir: dir, checkpointer });
      const docs = store.collection<Doc & { body: string }>('docs');
      const checkpointsSoFar = async () => (await checkpointer!.stats())[0]?.checkpoints ?? 0;
      for (let commit = 0; commit < 200; commit++) {
        await Promise.all(Array.from({ length: 10 }, (_, i) => docs.insertOne({ _id: `${commit}-${i}`, body })));
        if (checkpointer && commit % 20 === 19) {
          // A pause in the writes, as a server has between bursts, until the thread has checkpointed (however
          // slowly a loaded machine schedules it): the next commit then starts the WAL over.
          const before = await checkpointsSoFar();
          for (const deadline = Date.now() + 5_000; (await checkpointsSoFar()) === before && Date.now() < deadline; ) {
            await new Promise((r) => setTimeout(r, 5));
          }
        }
      }
      const walBytes = (await stat(join(dir, 'store.sqlite-wal'))).size;
      const stats = await checkpointer?.stats();
      await store.close();
      return { walBytes, stats };
    };
    const checkpointer = new WalCheckpointer({ intervalMs: 10 });
    try {
      const withThread = await writeAndMeasure(join(dataDir, 'with'), checkpointer);
      const without = await writeAndMeasure(join(dataDir, 'without'));
      expect(without.walBytes).toBeGreaterThan(4_000_000);
      expect(withThread.walBytes).toBeLessThan(without.walBytes / 2);
      expect(withThread.stats).toEqual([expect.objectContaining({ path: join(dataDir, 'with', 'store.sqlite') })]);
      expect(withThread.stats![0].frames).toBeGreaterThan(1_000);
      // The store let go of its file at close.
      expect(await checkpointer.stats()).toEqual([]);
    } finally {
      await checkpointer.close();
    }
    // Every write is there after the last connection closed, and that close left no WAL behind.
    const reopened = createEmbeddedStore({ dataDir: join(dataDir, 'with') });
    expect(await reopened.collection('docs').count({})).toBe(2_000);
    await reopened.close();
    expect(await readdir(join(dataDir, 'with'))).toEqual(['store.sqlite']);
  });

  it('refuses operations after close and collection names that are not table names', async () => {
    const store = createEmbeddedStore({ dataDir });
    const jobs = store.collection('jobs');
    expect(() => store.collection('../escape')).toThrow(/Invalid collection name/);
    await store.close();
    await expect(jobs.count({})).rejects.toThrow(/closed/);
    expect(await store.ping()).toBe(false);
  });

  it('refuses values JSON cannot keep', async () => {
    const store = createEmbeddedStore({ dataDir });
    const things = store.collection<Doc & Record<string, unknown>>('things');
    await expect(things.insertOne({ _id: 'nan', v: Number.NaN })).rejects.toThrow(TypeError);
    await expect(things.insertOne({ _id: 're', v: /x/ })).rejects.toThrow(TypeError);
    await expect(things.insertOne({ _id: 'buf', v: Buffer.from('x') })).rejects.toThrow(TypeError);
    expect(await things.insertOne({ _id: 'undef', v: undefined })).toEqual({ _id: 'undef', v: null });
    await store.close();
  });
});
