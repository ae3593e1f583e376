import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Doc, NativeAppendLogs, Store } from '../port';
import { createEmbeddedStore } from './embedded-store';

/**
 * What only the embedded engine's own append logs do: keep text byte for byte, number atomically across
 * connections, and take over logs kept as documents. The behaviour every log shares is the bus's contract test
 * (append-logs.contract.test.ts).
 */
describe('embedded append logs', () => {
  let dataDir: string;
  let stores: Store[];
  const open = () => {
    const s = createEmbeddedStore({ dataDir });
    stores.push(s);
    return s;
  };
  const logsOf = (s: Store): NativeAppendLogs => s.logs!;
  const entries = (...values: unknown[]) => values.map((v, i) => ({ key: `k${i}`, value: JSON.stringify(v) }));
  const tables = () => {
    const side = new DatabaseSync(join(dataDir, 'store.sqlite'));
    try {
      return (side.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    } finally {
      side.close();
    }
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-store-logs-'));
    stores = [];
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('numbers entries from 1 in append order and keeps their text as written', async () => {
    const logs = logsOf(open());
    expect(await logs.mark('t')).toBeNull();
    expect(await logs.read('t', 0, 10)).toEqual([]);
    const text = '{"q":"say \\"hi\\"","u":"\u00e9\u{1F600}","n":null}';
    expect(await logs.append('t', [{ key: 'a', value: text }, { key: 'b', value: 'null' }], 1_000)).toBe(2);
    expect(await logs.append('t', entries(3), 2_000)).toBe(3);
    expect(await logs.read('t', 0, 10)).toEqual([
      { seq: 1, key: 'a', value: text, publishedAt: 1_000 },
      { seq: 2, key: 'b', value: 'null', publishedAt: 1_000 },
      { seq: 3, key: 'k0', value: '3', publishedAt: 2_000 },
    ]);
    expect((await logs.read('t', 1, 1)).map((e) => e.seq)).toEqual([2]);
    expect(await logs.mark('t')).toEqual({ seq: 3, trimmedThrough: 0 });
    await logs.append('other.topic-1', entries(1), 0);
    expect(await logs.names()).toEqual(['other.topic-1', 't']);
    await expect(logs.append('bad name!', entries(1), 0)).rejects.toThrow(/Invalid log name/);
    await expect(logs.append('t', [], 0)).rejects.toThrow(/at least one entry/);
  });

  it('gives two connections to one file disjoint, gap-free numbers, each connection in its own order', async () => {
    const [a, b] = [logsOf(open()), logsOf(open())];
    const appends = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).append('t', entries(`${i % 2 === 0 ? 'a' : 'b'}${i}`, `${i % 2 === 0 ? 'a' : 'b'}${i}+`), i));
    const lasts = await Promise.all(appends);
    expect([...lasts].sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => 2 * (i + 1)));
    const held = await a.read('t', 0, 100);
    expect(held.map((e) => e.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    // Each append's two entries are adjacent, and each connection's appends keep their order.
    for (const who of ['a', 'b']) {
      const mine = held.map((e) => JSON.parse(e.value) as string).filter((v) => v.startsWith(who));
      const calls = mine.filter((v) => !v.endsWith('+'));
      expect(calls).toEqual([...calls].sort((x, y) => Number(x.slice(1)) - Number(y.slice(1))));
    }
    for (let i = 0; i < held.length; i += 2) expect(JSON.parse(held[i + 1].value)).toBe(`${JSON.parse(held[i].value)}+`);
  });

  describe('moving logs of the earlier document layout', () => {
    type Mark = Doc & { seq: number; trimmedThrough: number };
    type Entry = Doc & { seq: number; key: string; value: string; publishedAt: number };
    const entryDoc = (seq: number, value: unknown): Entry => ({ _id: String(seq).padStart(16, '0'), seq, key: `k${seq}`, value: JSON.stringify(value), publishedAt: 1_000 + seq });

    async function writeEarlierLayout(store: Store) {
      await store.collection<Mark>('bus_topics').insertOne({ _id: 'gateway.usage.v1', seq: 5, trimmedThrough: 2 });
      const usage = store.collection<Entry>('bus_log.gateway.usage.v1');
      await usage.ensureIndex({ fields: { seq: 1 }, unique: true });
      await usage.insertMany([entryDoc(3, { a: 'quote " here' }), entryDoc(4, [1, 2]), entryDoc(5, null)]);
      // Entries whose mark is missing: the next number follows the highest.
      await store.collection<Entry>('bus_log.orphan').insertMany([entryDoc(1, 'x'), entryDoc(2, 'y')]);
      await store.collection<Doc>('unrelated').insertOne({ _id: 'kept' });
    }

    it('moves marks and entries once, drops the old collections, and numbering goes on', async () => {
      const store = open();
      await writeEarlierLayout(store);
      const logs = logsOf(store);
      expect(await logs.adoptDocumentLogs('bus_topics', 'bus_log.')).toBe(2);
      expect(await logs.read('gateway.usage.v1', 0, 10)).toEqual([
        { seq: 3, key: 'k3', value: JSON.stringify({ a: 'quote " here' }), publishedAt: 1_003 },
        { seq: 4, key: 'k4', value: '[1,2]', publishedAt: 1_004 },
        { seq: 5, key: 'k5', value: 'null', publishedAt: 1_005 },
      ]);
      expect(await logs.mark('gateway.usage.v1')).toEqual({ seq: 5, trimmedThrough: 2 });
      expect(await logs.mark('orphan')).toEqual({ seq: 2, trimmedThrough: 0 });
      expect(tables().filter((t) => t.startsWith('doc:'))).toEqual(['doc:unrelated']);
      expect(await store.collection('unrelated').findOne({ _id: 'kept' })).toEqual({ _id: 'kept' });
      expect(await logs.append('gateway.usage.v1', entries('new'), 9_000)).toBe(6);
      expect(await logs.adoptDocumentLogs('bus_topics', 'bus_log.')).toBe(0);
      expect((await logs.read('gateway.usage.v1', 0, 10)).map((e) => e.seq)).toEqual([3, 4, 5, 6]);
    });

    it('refuses entries it cannot read, naming them, and changes nothing', async () => {
      const store = open();
      await writeEarlierLayout(store);
      const broken = { _id: '0000000000000006', seq: 6, key: 'k6', publishedAt: 1_006 } as unknown as Entry; // no value
      await store.collection<Entry>('bus_log.gateway.usage.v1').insertOne(broken);
      const before = tables();
      await expect(logsOf(store).adoptDocumentLogs('bus_topics', 'bus_log.')).rejects.toThrow(
        /earlier document layout that cannot be moved: bus_log\.gateway\.usage\.v1: an entry that is not/,
      );
      expect(tables()).toEqual(before);
      expect(await store.collection('bus_log.gateway.usage.v1').count({})).toBe(4);
      expect(await logsOf(store).names()).toEqual([]);
    });
  });
});
