import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createBus, type Bus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { createStore, type Store } from '@gw/store';
import { startEdge, type RunningEdge } from './app';
import { edgeConfigSchema } from './config';

/** The edge's access log (`ACCESS_LOG=true`): one line per request, the query string never in it. */
describe('edge access log', () => {
  let dir: string;
  let store: Store;
  let bus: Bus;
  let upstream: Server;
  let upstreamUrl: string;
  const raw: string[] = [];
  const logger = createLogger('edge', 'info', new Writable({ write(chunk: Buffer, _enc, done) { raw.push(chunk.toString()); done(); } }));
  const lines = () => raw.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-edge-access-'));
    store = createStore({ engine: 'embedded', dataDir: dir });
    bus = createBus({ engine: 'embedded', store, pollMs: 50 }, createLogger('edge-test', 'silent'));
    // Stands in for inference: answers with a request id, as a served call does.
    upstream = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'br-access-log-test' });
      res.end('{"data":[]}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    await bus.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function withEdge(accessLog: string, fn: (base: string) => Promise<void>): Promise<void> {
    const edge: RunningEdge = await startEdge({
      config: edgeConfigSchema.parse({
        EDGE_PORT: '0', EDGE_ADMIN_PORT: '0', KEYS_GRPC_ADDR: '127.0.0.1:1',
        INFERENCE_HTTP_URL: upstreamUrl, KEYS_HTTP_URL: upstreamUrl, BILLING_HTTP_URL: upstreamUrl, ACCESS_LOG: accessLog,
        GATEWAY_IDENTITY_SECRET: 'edge-access-log-test-identity-secret-0123456789',
      }),
      bus, logger,
    });
    try {
      await fn(`http://127.0.0.1:${edge.httpPort}`);
    } finally {
      await edge.stop();
    }
  }

  it('writes method, path, status, duration, trace id and request id, and never the query', async () => {
    raw.length = 0;
    await withEdge('true', async (base) => {
      const served = await fetch(`${base}/v1/models?api_key=sk-gw-v1-in-the-query`);
      expect(served.status).toBe(200);
      const unknown = await fetch(`${base}/v2/nothing?token=sk-gw-v1-other`);
      expect(unknown.status).toBe(404);
      const access = () => lines().filter((l) => l.msg === 'access');
      // The line is written when the response closes, which can trail the client's read by a tick.
      for (let i = 0; i < 100 && access().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(access()).toEqual([
        expect.objectContaining({
          service: 'edge', method: 'GET', path: '/v1/models', status: 200, durationMs: expect.any(Number),
          traceId: served.headers.get('x-trace-id'), requestId: 'br-access-log-test',
        }),
        expect.objectContaining({ method: 'GET', path: '/v2/nothing', status: 404, traceId: unknown.headers.get('x-trace-id') }),
      ]);
    });
    expect(raw.join('')).not.toContain('sk-gw-v1-');
  });

  it('is off by default', async () => {
    raw.length = 0;
    await withEdge('false', async (base) => {
      expect((await fetch(`${base}/v1/models`)).status).toBe(200);
    });
    expect(lines().filter((l) => l.msg === 'access')).toEqual([]);
  });
});
