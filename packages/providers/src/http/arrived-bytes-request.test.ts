import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { requestKeepingArrivedBytes } from './arrived-bytes-request';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** A provider whose answer to each path the test sets; it counts the connections that closed. */
describe('requestKeepingArrivedBytes', () => {
  const routes = new Map<string, Route>();
  let server: Server;
  let pool: Pool;
  let closedConnections = 0;

  beforeAll(async () => {
    server = createServer((req, res) => routes.get(req.url!)!(req, res));
    server.on('connection', (socket) => socket.on('close', () => (closedConnections += 1)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    await pool.close();
    await new Promise((r) => server.close(r));
  });

  const get = (path: string, signal?: AbortSignal) => requestKeepingArrivedBytes(pool, { method: 'GET', path, signal });
  const readAll = async (body: AsyncIterable<unknown>) => {
    let text = '';
    try {
      for await (const part of body) text += String(part);
    } catch (err) {
      return { text, err: err as Error & { code?: string } };
    }
    return { text, err: null };
  };

  /** Two events, then the connection cut with the events: they reach the reader in one read with the cut. */
  const cutAfterEvents: Route = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: one\n\ndata: two\n\n', () => res.destroy());
  };

  it('gives a reader who comes late every byte that arrived before the connection was cut, then the failure', async () => {
    routes.set('/cut', cutAfterEvents);
    const answer = await get('/cut');
    expect(answer.statusCode).toBe(200);
    // The reader is busy while the events and the cut both arrive.
    await sleep(50);
    const { text, err } = await readAll(answer.body);
    expect(text).toBe('data: one\n\ndata: two\n\n');
    expect(err?.code).toBe('UND_ERR_SOCKET');
  });

  it('answers a whole body, as a stream or as text, and reuses the connection', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024); // past every buffer: the transfer pauses and resumes as it is read
    routes.set('/whole', (_req, res) => res.end(big));
    const before = closedConnections;
    expect((await readAll((await get('/whole')).body)).text).toBe(big);
    expect(await (await get('/whole')).body.text()).toBe(big);
    expect(closedConnections).toBe(before);
  });

  it('stops the transfer when the reader leaves the body before its end', async () => {
    let serverSawClose!: Promise<unknown>;
    routes.set('/endless', (_req, res) => {
      serverSawClose = once(res, 'close');
      res.writeHead(200);
      const timer = setInterval(() => res.write('tick\n'), 5);
      res.on('close', () => clearInterval(timer));
    });
    const answer = await get('/endless');
    for await (const _part of answer.body) break;
    await serverSawClose;
    expect(answer.body.destroyed).toBe(true);
  });

  it('ends with the abort reason when the caller aborts mid-body, after what had arrived', async () => {
    routes.set('/slow', (_req, res) => {
      res.writeHead(200);
      res.write('first\n');
    });
    const controller = new AbortController();
    const answer = await get('/slow', controller.signal);
    await sleep(30);
    controller.abort(new Error('caller left'));
    const { text, err } = await readAll(answer.body);
    expect(text).toBe('first\n');
    expect(err?.message).toBe('caller left');
  });

  it('rejects when the request fails before an answer, or was aborted before it was sent', async () => {
    routes.set('/hang-up', (req) => req.socket.destroy());
    await expect(get('/hang-up')).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    const controller = new AbortController();
    controller.abort(new Error('never mind'));
    await expect(get('/cut', controller.signal)).rejects.toThrow('never mind');
  });
});
