import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Doc } from '../port';
import { createEmbeddedStore } from './embedded-store';

/** What only the embedded engine has: datafiles on disk. The shared behaviour is in store.contract.test.ts. */
describe('embedded store datafiles', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-store-embedded-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps one datafile per collection and compacts it on close', async () => {
    const store = createEmbeddedStore({ dataDir });
    const counters = store.collection<Doc & { n: number }>('counters');
    await counters.insertOne({ _id: 'c', n: 0 });
    for (let i = 0; i < 20; i++) await counters.updateOne({ _id: 'c' }, { $inc: { n: 1 } });
    const lines = async () => (await readFile(join(dataDir, 'counters.db'), 'utf8')).trim().split('\n');
    expect((await lines()).length).toBe(21); // NeDB appends every change
    await store.close();
    expect(await lines()).toEqual([JSON.stringify({ _id: 'c', n: 20 })]);
  });

  it('refuses a second open of the same datafile in one process', async () => {
    const first = createEmbeddedStore({ dataDir });
    const second = createEmbeddedStore({ dataDir });
    await first.collection('jobs').count({});
    await expect(second.collection('jobs').count({})).rejects.toThrow(/already open/);
    await first.close();
    expect(await second.collection('jobs').count({})).toBe(0);
    await second.close();
  });

  it('refuses operations after close and collection names that are not file names', async () => {
    const store = createEmbeddedStore({ dataDir });
    const jobs = store.collection('jobs');
    expect(() => store.collection('../escape')).toThrow(/Invalid collection name/);
    await store.close();
    await expect(jobs.count({})).rejects.toThrow(/closed/);
    expect(await store.ping()).toBe(false);
  });

  it('refuses values a JSON datafile cannot keep', async () => {
    const store = createEmbeddedStore({ dataDir });
    const things = store.collection<Doc & Record<string, unknown>>('things');
    await expect(things.insertOne({ _id: 'nan', v: Number.NaN })).rejects.toThrow(TypeError);
    await expect(things.insertOne({ _id: 're', v: /x/ })).rejects.toThrow(TypeError);
    await expect(things.insertOne({ _id: 'buf', v: Buffer.from('x') })).rejects.toThrow(TypeError);
    expect(await things.insertOne({ _id: 'undef', v: undefined })).toEqual({ _id: 'undef', v: null });
    await store.close();
  });
});
