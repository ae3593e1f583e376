import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, MAX_EVENT_BYTES } from '@gw/provider-spec';
import { Deadline } from './deadline';
import { translateEventStream } from './translate-event-stream';

/**
 * A provider that sends two events and its end marker, then holds the body open until the test lets it end:
 * what a provider's body looks like when its last bytes (the chunked terminator) come a read after the marker.
 */
describe('translateEventStream', () => {
  let server: Server;
  let pool: Pool;
  let connections = 0;
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\ndata: two\n\ndata: [END]\n\n');
      held.push(res);
    });
    server.on('connection', () => { connections += 1; });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
  });
  afterAll(async () => {
    for (const res of held.splice(0)) res.end();
    await pool.close();
    await new Promise((r) => server.close(r));
  });

  const open = async (withMarker: boolean) => {
    const res = await pool.request({ method: 'GET', path: '/' });
    let ended = false;
    const items = translateEventStream(
      res,
      new Deadline(10_000),
      (event) => (event.data === '[END]' ? ((ended = true), []) : [event.data]),
      () => ['closing'],
      withMarker ? () => ended : undefined,
    );
    return items;
  };
  const collect = async (items: AsyncIterable<string>) => {
    const out: string[] = [];
    for await (const item of items) out.push(item);
    return out;
  };

  it('ends at the end marker while the body is still open, then drains it so the connection is reused', async () => {
    expect(await collect(await open(true))).toEqual(['one', 'two', 'closing']);
    expect(held).toHaveLength(1);
    held.shift()!.end();
    const second = collect(await open(true));
    expect(await second).toEqual(['one', 'two', 'closing']);
    held.shift()!.end();
    expect(connections).toBe(1);
  });

  it('without a marker check, ends when the body ends', async () => {
    const items = collect(await open(false));
    await new Promise((r) => setImmediate(r));
    let settled = false;
    void items.then(() => { settled = true; });
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    held.shift()!.end();
    expect(await items).toEqual(['one', 'two', 'closing']);
  });
});

describe('translateEventStream against a provider whose event never ends', () => {
  let server: Server;
  let pool: Pool;
  let bytesSent = 0;

  beforeAll(async () => {
    const piece = 'x'.repeat(1024 * 1024);
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: ');
      // 64 MiB in all, twice the bound, unless the reader stops first and the socket closes.
      let pieces = 0;
      const more = () => {
        while (pieces < 64 && !res.destroyed) {
          pieces += 1;
          bytesSent += piece.length;
          if (!res.write(piece)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
  });
  afterAll(async () => {
    await pool.close();
    await new Promise((r) => server.close(r));
  });

  it('ends the stream with a typed upstream error at the bound, without reading the rest', async () => {
    const res = await pool.request({ method: 'GET', path: '/' });
    const items = translateEventStream(res, new Deadline(30_000), (event) => [event.data], () => []);
    const failure = await (async () => {
      for await (const _ of items) { /* no event ever ends */ }
      return null;
    })().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 502, message: `The provider sent a stream event over ${MAX_EVENT_BYTES} bytes` });
    expect(isRetryableUpstreamError(failure)).toBe(false);
    expect(res.body.destroyed).toBe(true);
    expect(bytesSent).toBeLessThan(64 * 1024 * 1024);
  });
});
