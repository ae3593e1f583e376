import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { UpstreamError } from '@gw/platform';
import { Deadline } from './deadline';
import { upstreamLines } from './upstream-lines';

/** A provider's results file: `/<n>` answers two short lines, one line of n characters, then a last short line. */
describe('upstreamLines', () => {
  let server: Server;
  let pool: Pool;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const long = Number((req.url ?? '/').slice(1));
      res.writeHead(200, { 'content-type': 'application/jsonl' });
      res.write('{"n":1}\n\n{"n":2}\r\n');
      // In pieces, as a large file arrives.
      for (let i = 0; i < long; i += 8192) res.write('x'.repeat(Math.min(8192, long - i)));
      res.end('\n{"n":3}\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 2 });
  });
  afterAll(async () => {
    await pool.close();
    await new Promise((r) => server.close(r));
  });

  const read = async (long: number, maxLineBytes: number) => {
    const lines: string[] = [];
    for await (const line of upstreamLines(await pool.request({ method: 'GET', path: `/${long}` }), new Deadline(10_000), maxLineBytes)) lines.push(line);
    return lines;
  };

  it('yields the non-blank lines, each within the bound', async () => {
    const lines = await read(50_000, 60_000);
    expect(lines.map((l) => l.length)).toEqual([7, 7, 50_000, 7]);
  });

  it('refuses a line past the bound with a typed upstream error', async () => {
    const failure = await read(500_000, 60_000).then(() => null, (e: unknown) => e);
    expect(failure).toBeInstanceOf(UpstreamError);
    expect(failure).toMatchObject({ status: 502, message: 'The provider sent a results line over 60000 bytes' });
  });
});
