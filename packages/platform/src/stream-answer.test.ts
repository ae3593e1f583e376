import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { streamAnswer } from './stream-answer';

const BYTES = 64 * 1024 * 1024;

describe('streamAnswer', () => {
  let server: Server;
  let source: Readable;
  let readErrors: unknown[];

  /** A server answering every request with `makeSource()` through streamAnswer, its length promised. */
  async function serve(makeSource: () => Readable): Promise<number> {
    readErrors = [];
    server = createServer((_req, res) => {
      source = makeSource();
      res.setHeader('content-length', String(BYTES));
      void streamAnswer(source, res, (err) => readErrors.push(err));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }
  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const chunks = (n: number, fail?: Error) => Readable.from((function* () {
    for (let i = 0; i < n; i++) yield Buffer.alloc(64 * 1024);
    if (fail) throw fail;
  })());

  // Before (body.pipe(res)), the source stayed open after the client left: a stored file until garbage collection.
  it('a client that leaves first ends the read and closes the source', async () => {
    const port = await serve(() => chunks(BYTES / (64 * 1024)));
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'));
      socket.once('data', () => { socket.destroy(); resolve(); });
    });
    const deadline = Date.now() + 5_000;
    while (!source.destroyed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(source.destroyed).toBe(true);
    expect(readErrors).toEqual([]);
  });

  it('a read that fails part-way is reported and cuts the answer short', async () => {
    const port = await serve(() => chunks(4, new Error('disk gone')));
    const received = await new Promise<number>((resolve) => {
      let n = 0;
      const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n'));
      socket.on('data', (c: Buffer) => { n += c.length; });
      socket.on('close', () => resolve(n));
    });
    expect(received).toBeLessThan(BYTES);
    expect(readErrors).toEqual([new Error('disk gone')]);
  });
});
