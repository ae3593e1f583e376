import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore, type AppendLogs, type Store, type StoreConfig } from '@gw/store';
import { DocumentLogs } from './document-logs';
import { DOCUMENT_LOG_PREFIX, DOCUMENT_TOPICS_COLLECTION } from './names';

/**
 * The topic logs' contract, on every kind the embedded bus runs on: the embedded engine's own log tables, and
 * topics as documents on the embedded engine's collections and on MongoDB (the server MONGO_URL names).
 */
interface Backend {
  name: string;
  config(): Promise<StoreConfig & { cleanup(store: Store): Promise<void> }>;
  logs(store: Store): AppendLogs;
}

const documents = (store: Store) => new DocumentLogs(store, DOCUMENT_TOPICS_COLLECTION, DOCUMENT_LOG_PREFIX);

const embeddedConfig = async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-append-logs-'));
  return { engine: 'embedded' as const, dataDir, cleanup: () => rm(dataDir, { recursive: true, force: true }) };
};

const backends: Backend[] = [
  { name: 'the embedded engine\'s log tables', config: embeddedConfig, logs: (store) => store.logs! },
  { name: 'documents on the embedded engine', config: embeddedConfig, logs: documents },
  {
    name: 'documents on MongoDB',
    async config() {
      const base = process.env.MONGO_URL;
      if (!base) throw new Error('MONGO_URL is not set: run through jest (its globalSetup starts the engines)');
      const url = new URL(base);
      url.pathname = `/append_logs_${randomUUID().replace(/-/g, '')}`;
      // What the test wrote goes with it: every log it used, and the marks.
      const cleanup = async (store: Store) => {
        const logs = documents(store);
        for (const name of await logs.names()) await store.collection(`${DOCUMENT_LOG_PREFIX}${name}`).deleteMany({});
        await store.collection(DOCUMENT_TOPICS_COLLECTION).deleteMany({});
      };
      return { engine: 'mongo' as const, url: url.toString(), cleanup };
    },
    logs: documents,
  },
];

const entries = (...values: unknown[]) => values.map((v, i) => ({ key: `k${i}`, value: JSON.stringify(v) }));

describe.each(backends)('append logs: $name', (backend) => {
  let cfg: Awaited<ReturnType<Backend['config']>>;
  let open: Store[];
  const store = () => {
    const s = createStore(cfg);
    open.push(s);
    return s;
  };

  beforeEach(async () => {
    cfg = await backend.config();
    open = [];
  });
  afterEach(async () => {
    const cleaner = createStore(cfg);
    await Promise.all(open.map((s) => s.close()));
    await cfg.cleanup(cleaner);
    await cleaner.close();
  });

  it('numbers entries from 1 in append order, per log, and reads them after an offset', async () => {
    const logs = backend.logs(store());
    expect(await logs.mark('t')).toBeNull();
    expect(await logs.read('t', 0, 10)).toEqual([]);
    expect(await logs.append('t', [{ key: 'a', value: '{"q":"say \\"hi\\""}' }, { key: 'b', value: 'null' }], 1_000)).toBe(2);
    expect(await logs.append('t', entries(3), 2_000)).toBe(3);
    expect(await logs.append('u.v-1', entries('x'), 0)).toBe(1);
    expect(await logs.read('t', 0, 10)).toEqual([
      { seq: 1, key: 'a', value: '{"q":"say \\"hi\\""}', publishedAt: 1_000 },
      { seq: 2, key: 'b', value: 'null', publishedAt: 1_000 },
      { seq: 3, key: 'k0', value: '3', publishedAt: 2_000 },
    ]);
    expect((await logs.read('t', 1, 1)).map((e) => e.seq)).toEqual([2]);
    expect(await logs.mark('t')).toEqual({ seq: 3, trimmedThrough: 0 });
    expect(await logs.names()).toEqual(['t', 'u.v-1']);
  });

  it('reads within a character budget, the first entry whatever its length', async () => {
    const logs = backend.logs(store());
    // Values of 12, 1,002, 1,002, 5,002 and 12 characters.
    await logs.append('t', entries('a'.repeat(10), 'b'.repeat(1_000), 'c'.repeat(1_000), 'd'.repeat(5_000), 'e'.repeat(10)), 1_000);
    const seqs = async (after: number, maxChars?: number) => (await logs.read('t', after, 10, maxChars)).map((e) => e.seq);
    expect(await seqs(0)).toEqual([1, 2, 3, 4, 5]);
    expect(await seqs(0, 2_016)).toEqual([1, 2, 3]);
    expect(await seqs(0, 2_015)).toEqual([1, 2]);
    expect(await seqs(3, 100)).toEqual([4]);
    expect(await seqs(4, 100)).toEqual([5]);
  });

  it('concurrent appends get consecutive numbers in call order', async () => {
    const logs = backend.logs(store());
    const lasts = await Promise.all(Array.from({ length: 20 }, (_, i) => logs.append('t', entries(i * 2, i * 2 + 1), i)));
    expect(lasts).toEqual(Array.from({ length: 20 }, (_, i) => 2 * (i + 1)));
    const held = await logs.read('t', 0, 100);
    expect(held.map((e) => [e.seq, JSON.parse(e.value)])).toEqual(Array.from({ length: 40 }, (_, i) => [i + 1, i]));
  });

  it('deletes from the oldest end, keeps its trim mark rising, and numbers on past what was deleted after a reopen', async () => {
    const first = store();
    const logs = backend.logs(first);
    await logs.append('t', entries(...Array.from({ length: 10 }, (_, i) => i)), 1_000);
    await logs.append('t', entries(10, 11), 5_000);
    expect(await logs.oldest('t')).toBe(1);
    expect(await logs.newestPublishedBefore('t', 1_000)).toBeNull();
    expect(await logs.newestPublishedBefore('t', 4_999)).toBe(10);
    expect(await logs.newestPublishedBefore('t', 9_999)).toBe(12);
    expect(await logs.deleteRange('t', 0, 4)).toBe(4);
    expect(await logs.oldest('t')).toBe(5);
    await logs.markTrimmed('t', 4);
    await logs.markTrimmed('t', 2);
    expect(await logs.mark('t')).toEqual({ seq: 12, trimmedThrough: 4 });
    expect(await logs.deleteRange('t', 4, 12)).toBe(8);
    expect(await logs.oldest('t')).toBeNull();
    await first.close();

    const reopened = backend.logs(store());
    expect(await reopened.mark('t')).toEqual({ seq: 12, trimmedThrough: 4 });
    expect(await reopened.append('t', entries('next'), 6_000)).toBe(13);
    expect((await reopened.read('t', 0, 10)).map((e) => e.seq)).toEqual([13]);
  });
});
