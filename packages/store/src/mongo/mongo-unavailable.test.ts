import { createServer, type Server, type Socket } from 'node:net';
import { UnavailableError } from '@gw/platform';
import type { Collection, Doc, Store } from '../port';
import { createMongoStore } from './mongo-store';

/**
 * A MongoDB server that hangs (the store drill freezes one with SIGSTOP: connections are accepted, nothing is
 * answered) must not hang the calls that need it: each operation fails as unavailable (a 503) once its
 * bound has passed, instead of waiting for the driver's 30 s server selection or forever.
 */
interface Item extends Doc { n: number }

describe('the mongo store against a server that accepts connections and never answers', () => {
  let server: Server;
  const sockets: Socket[] = [];
  let store: Store;
  const OP_TIMEOUT_MS = 100;

  beforeAll(async () => {
    server = createServer((socket) => { sockets.push(socket); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    store = createMongoStore({ url: `mongodb://127.0.0.1:${port}/hung`, opTimeoutMs: OP_TIMEOUT_MS });
  });

  afterAll(async () => {
    await store.close();
    sockets.forEach((s) => s.destroy());
    await new Promise((resolve) => server.close(resolve));
  });

  const operations: [string, (items: Collection<Item>) => Promise<unknown>][] = [
    ['findOne', (c) => c.findOne({ _id: 'a' })],
    ['find', (c) => c.find({})],
    ['insertOne', (c) => c.insertOne({ _id: 'a', n: 1 })],
    ['updateOne', (c) => c.updateOne({ _id: 'a' }, { $inc: { n: 1 } })],
    ['findOneAndUpdate', (c) => c.findOneAndUpdate({ _id: 'a' }, { $inc: { n: 1 } })],
    ['count', (c) => c.count({})],
    ['insertMany ignoring duplicates', (c) => c.insertMany([{ _id: 'a', n: 1 }], { ignoreDuplicates: true })],
    ['updateMany', (c) => c.updateMany({}, { $inc: { n: 1 } })],
  ];

  // The bound, then a ping that gets no answer within the bound either.
  test.each(operations)('%s fails as unavailable (503 store_unavailable) in about twice the bound', async (_name, op) => {
    const startedAt = Date.now();
    const failure = await op(store.collection<Item>('items')).then(() => null, (err: unknown) => err);
    const tookMs = Date.now() - startedAt;
    expect(failure).toBeInstanceOf(UnavailableError);
    expect(failure).toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(tookMs).toBeGreaterThanOrEqual(2 * OP_TIMEOUT_MS - 50);
    expect(tookMs).toBeLessThan(2 * OP_TIMEOUT_MS + 2_000);
  });

  test('ping says the store is down within its own timeout', async () => {
    expect(await store.ping()).toBe(false);
  });
});
