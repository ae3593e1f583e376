import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { UpstreamError } from '@gw/platform';
import { z } from 'zod';
import { readJsonAnswer } from './upstream-json';

/** A provider whose answer to `/<n>?chunked=1` is a JSON string of n characters, with or without a declared length. */
describe('readJsonAnswer', () => {
  let server: Server;
  let pool: Pool;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = JSON.stringify({ text: 'x'.repeat(Number(url.pathname.slice(1))) });
      if (url.searchParams.has('chunked')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        // Written in pieces, as a provider streams a long answer.
        for (let i = 0; i < body.length; i += 16 * 1024) res.write(body.slice(i, i + 16 * 1024));
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 4 });
  });
  afterAll(async () => {
    await pool.close();
    await new Promise((r) => server.close(r));
  });

  const schema = z.object({ text: z.string() });
  const answer = (path: string) => pool.request({ method: 'GET', path });
  const limit = 100_000;

  it.each([
    { name: 'a declared length', query: '' },
    { name: 'a chunked body', query: '?chunked=1' },
  ])('reads an answer within the bound, with $name', async ({ query }) => {
    const { data } = await readJsonAnswer(await answer(`/90000${query}`), schema, limit);
    expect(data.text).toHaveLength(90_000);
  });

  it.each([
    { name: 'a declared length over it, before reading', query: '' },
    { name: 'a chunked body as it passes it', query: '?chunked=1' },
  ])('refuses an answer over the bound: $name', async ({ query }) => {
    const res = await answer(`/5000000${query}`);
    const err = await readJsonAnswer(res, schema, limit).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ status: 502, message: `The provider sent a response over ${limit} bytes` });
    // The rest of the body is dropped, not read on.
    expect(res.body.destroyed).toBe(true);
  });
});
