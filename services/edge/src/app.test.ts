import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, type Bus } from '@gw/bus';
import { startKeysService } from '@gw/keys';
import { createLogger, IdentityVerifier, type IdentityClaims, type RunningService } from '@gw/platform';
import { TOPICS } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { startEdge, type RunningEdge } from './app';
import { edgeConfigSchema } from './config';
import { createFsBlobStore } from '@gw/blobs';

const logger = createLogger('edge-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const ADMIN = 'sk-gw-v1-edge-test-management-key';
const ADMIN_HASH = createHash('sha256').update(ADMIN).digest('hex');
const ACCOUNT = 'acct_edge';
const BODY_LIMIT = 2048;
const SECRET = 'edge-test-identity-secret-0123456789abcdef';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (res: Response) => res.json() as Promise<any>;

interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The whole body arrived (false when the edge cut the request off). */
  complete: boolean;
}

/** A stand-in for a service behind the edge: records what reaches it and echoes it back as JSON. */
interface Echo {
  url: string;
  seen: SeenRequest[];
  /** Overrides the answer for the next requests (streaming tests). */
  respond?: (req: SeenRequest, res: ServerResponse) => void;
  close(): Promise<void>;
}

async function startEcho(name: string): Promise<Echo> {
  const echo: Echo = { url: '', seen: [], close: async () => {} };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const entry: SeenRequest = { method: req.method!, url: req.url!, headers: req.headers, body: '', complete: false };
    echo.seen.push(entry);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => {});
    req.on('end', () => {
      entry.body = Buffer.concat(chunks).toString('utf8');
      entry.complete = true;
      if (echo.respond) return echo.respond(entry, res);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ service: name, ...entry }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  echo.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  echo.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return echo;
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Raw HTTP, for bodies fetch will not send (a lying or absent Content-Length, slow chunks). */
function rawRequest(port: number, opts: { method: string; path: string; headers: Record<string, string | number>; write: (req: ReturnType<typeof request>) => Promise<void> }): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: opts.method, path: opts.path, headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    // The edge may answer and close before the whole body is written; the answer is what counts.
    req.on('error', (err) => reject(err));
    opts.write(req).catch(reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('edge in front of the real keys service (embedded engines)', () => {
  let dir: string;
  const stores: Store[] = [];
  let bus: Bus;
  let billing: RunningService;
  let keys: RunningService;
  let inference: Echo;
  let billingHttp: Echo;
  let edge: RunningEdge;
  let base: string;
  const started: RunningEdge[] = [];

  const openStore = (name: string) => {
    const s = createStore({ engine: 'embedded', dataDir: join(dir, name) });
    stores.push(s);
    return s;
  };

  async function startTestEdge(overrides: Record<string, string> = {}, inProcess: Parameters<typeof startEdge>[0]['inProcess'] = {}): Promise<RunningEdge> {
    const e = await startEdge({
      inProcess,
      config: edgeConfigSchema.parse({
        EDGE_PORT: '0', EDGE_ADMIN_PORT: '0', GATEWAY_IDENTITY_SECRET: SECRET,
        KEYS_GRPC_ADDR: `127.0.0.1:${keys.grpcPort}`, KEYS_HTTP_URL: `http://127.0.0.1:${keys.httpPort}`,
        INFERENCE_HTTP_URL: inference.url, BILLING_HTTP_URL: billingHttp.url,
        BODY_LIMIT_BYTES: String(BODY_LIMIT),
        // Far longer than any test: a key change must reach the cache through its event, not by expiry.
        AUTH_CACHE_TTL_MS: '3600000',
        ...overrides,
      }),
      bus, logger,
    });
    started.push(e);
    return e;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-edge-'));
    bus = createBus({ engine: 'embedded', store: openStore('bus'), pollMs: 50 }, logger);
    billing = await startBillingService({
      config: billingConfigSchema.parse({ BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', KEYS_GRPC_ADDR: '127.0.0.1:1', GATEWAY_IDENTITY_SECRET: SECRET, SEED_ACCOUNTS: JSON.stringify([{ id: ACCOUNT, wallet_usd: '10' }]) }),
      store: openStore('billing'), bus, logger, blobs: createFsBlobStore(join(dir, 'billing-blobs')),
    });
    keys = await startKeysService({
      config: { KEYS_HTTP_PORT: 0, KEYS_GRPC_PORT: 0, BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, SEED_ACCOUNTS: [{ id: ACCOUNT, management_key: ADMIN }], GATEWAY_IDENTITY_SECRET: SECRET, BIND_HOST: '127.0.0.1' },
      store: openStore('keys'), bus, logger, announce: () => {},
    });
    inference = await startEcho('inference');
    billingHttp = await startEcho('billing');
    edge = await startTestEdge();
    base = `http://127.0.0.1:${edge.httpPort}`;
  });

  afterAll(async () => {
    for (const e of started) await e.stop();
    await inference?.close();
    await billingHttp?.close();
    await keys?.stop();
    await billing?.stop();
    await bus?.close();
    for (const s of stores) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    inference.seen.length = 0;
    billingHttp.seen.length = 0;
    inference.respond = undefined;
  });

  /** Creates an ordinary key through the edge with the management key. */
  async function createKey(body: Record<string, unknown> = {}): Promise<{ secret: string; hash: string }> {
    const res = await fetch(`${base}/v1/keys`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'edge test key', ...body }),
    });
    expect(res.status).toBe(201);
    const created = await json(res);
    return { secret: created.key, hash: created.data.hash };
  }

  const chat = (headers: Record<string, string>, body = '{"model":"m","messages":[]}') =>
    fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  async function expectEnvelope(res: Response, status: number, code: string) {
    expect(res.status).toBe(status);
    const traceId = res.headers.get('x-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const body = await json(res);
    expect(body).toEqual({ code: String(status), error: { message: expect.any(String), type: expect.any(String), param: null, code, traceId }, traceId });
    return body;
  }

  /** What a service behind the edge believes about a request it received: the verified token's claims. */
  const claimsOf = (seen: SeenRequest): IdentityClaims => {
    const token = seen.headers['x-gw-identity'];
    return new IdentityVerifier(SECRET).verify(typeof token === 'string' ? token : undefined, { method: seen.method, path: seen.url });
  };

  describe('a service in the same process', () => {
    it('gets the request through its own app, not its port: same identity check, same answers, internal headers stripped', async () => {
      // Billing's URL points nowhere: only the in-process hand-over can answer.
      const local = await startTestEdge({ BILLING_HTTP_URL: `http://127.0.0.1:${await deadPort()}` }, { billing: billing.handIn });
      const at = `http://127.0.0.1:${local.httpPort}`;
      const balance = await fetch(`${at}/v1/billing/balance`, { headers: { authorization: `Bearer ${ADMIN}`, 'x-gw-account': 'acct_someone_else' } });
      expect(balance.status).toBe(200);
      // The seeded account's own balance: the caller's key decides the account, not a header it sent.
      expect((await json(balance)).data).toEqual(expect.objectContaining({ wallet: '10.000000', currency: 'USD' }));
      // The service's own error renderer answers through the hand-over too, with the edge's trace id.
      const missing = await fetch(`${at}/v1/billing/requests/br-00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(missing.status).toBe(404);
      expect((await json(missing)).traceId).toBe(missing.headers.get('x-trace-id'));
    });
  });

  describe('identity token', () => {
    it('forwards a signed identity bound to the request and nothing internal the client sent', async () => {
      const body = '{"model":"m","messages":[{"role":"user","content":"hi"}]}';
      const res = await chat({
        authorization: `Bearer ${ADMIN}`,
        'x-gw-account-id': 'acct_victim',
        'x-gw-key-hash': 'f'.repeat(64),
        'x-gw-trace-id': 'forged-trace',
        'x-gw-key-limit-micros': '999999999',
        'x-gw-key-limit-reset': 'daily',
        'x-gw-identity': 'v1.forged.token',
        'X-GW-Anything-Else': 'sneaky',
        'x-api-key': 'sk-some-other-secret',
        'x-client-note': 'kept',
      }, body);
      expect(res.status).toBe(200);
      expect(inference.seen).toHaveLength(1);
      const h = inference.seen[0].headers;
      const claims = claimsOf(inference.seen[0]);
      expect(claims).toMatchObject({ issuer: 'edge', method: 'POST', path: '/v1/chat/completions', traceId: res.headers.get('x-trace-id') });
      expect(claims.identity).toEqual({ accountId: ACCOUNT, keyHash: ADMIN_HASH, isManagement: true, keyLimitMicros: null, keyLimitReset: null });
      expect(h['x-gw-trace-id']).toBe(res.headers.get('x-trace-id'));
      expect(Object.keys(h).filter((k) => k.startsWith('x-gw-')).sort()).toEqual(['x-gw-identity', 'x-gw-trace-id']);
      expect(h.authorization).toBeUndefined();
      expect(h['x-api-key']).toBeUndefined();
      expect(h['x-client-note']).toBe('kept');
      expect(inference.seen[0].body).toBe(body);
    });

    it("an ordinary key's limit comes from the key, never from the client", async () => {
      const limited = await createKey({ limit: 2.5, limit_reset: 'daily' });
      const unlimited = await createKey();
      const forged = { 'x-gw-key-limit-micros': '999999999', 'x-gw-key-limit-reset': 'monthly', 'x-gw-key-management': 'true' };

      expect((await chat({ authorization: `Bearer ${limited.secret}`, ...forged })).status).toBe(200);
      expect((await chat({ authorization: `Bearer ${unlimited.secret}`, ...forged })).status).toBe(200);
      const [a, b] = inference.seen.map((s) => claimsOf(s).identity);
      expect(a).toEqual({ accountId: ACCOUNT, keyHash: limited.hash, isManagement: false, keyLimitMicros: 2_500_000, keyLimitReset: 'daily' });
      expect(b).toEqual({ accountId: ACCOUNT, keyHash: unlimited.hash, isManagement: false, keyLimitMicros: null, keyLimitReset: null });
    });

    it('/v1/models needs no key and forwards an anonymous identity, even when one is forged', async () => {
      const res = await fetch(`${base}/v1/models/openai/gpt-4o-mini`, {
        headers: { 'x-gw-account-id': 'acct_victim', 'x-gw-key-hash': 'f'.repeat(64), 'x-gw-key-management': 'true' },
      });
      expect(res.status).toBe(200);
      expect(inference.seen.map((s) => s.url)).toEqual(['/v1/models/openai/gpt-4o-mini']);
      expect(claimsOf(inference.seen[0])).toMatchObject({ identity: null, method: 'GET', path: '/v1/models/openai/gpt-4o-mini' });
    });

    it('/v1/models accepts a bearer key without passing it on', async () => {
      const res = await fetch(`${base}/v1/models`, { headers: { authorization: 'Bearer sk-gw-v1-not-even-a-real-key' } });
      expect(res.status).toBe(200);
      expect(inference.seen[0].headers.authorization).toBeUndefined();
    });

    it('console pages need no key and reach the console with an anonymous identity, the key not passed on', async () => {
      const consoleHttp = await startEcho('console');
      try {
        const e = await startTestEdge({ CONSOLE_HTTP_URL: consoleHttp.url });
        const res = await fetch(`http://127.0.0.1:${e.httpPort}/console/keys`, { headers: { authorization: `Bearer ${ADMIN}` } });
        expect(res.status).toBe(200);
        expect(consoleHttp.seen.map((s) => s.url)).toEqual(['/console/keys']);
        expect(consoleHttp.seen[0].headers.authorization).toBeUndefined();
        expect(claimsOf(consoleHttp.seen[0])).toMatchObject({ identity: null, method: 'GET', path: '/console/keys' });
        expect(inference.seen).toHaveLength(0);
      } finally {
        await consoleHttp.close();
      }
    });

    it('billing routes go to billing with the identity', async () => {
      const res = await fetch(`${base}/v1/billing/balance`, { headers: { authorization: `Bearer ${ADMIN}`, 'x-gw-account-id': 'acct_victim' } });
      expect(res.status).toBe(200);
      expect(inference.seen).toHaveLength(0);
      expect(billingHttp.seen[0].url).toBe('/v1/billing/balance');
      expect(claimsOf(billingHttp.seen[0]).identity).toMatchObject({ accountId: ACCOUNT, keyHash: ADMIN_HASH });
    });

    it('binds the token to the path with its query exactly as forwarded', async () => {
      const res = await fetch(`${base}/v1/models?x=1&y=%2F`);
      expect(res.status).toBe(200);
      expect(claimsOf(inference.seen[0])).toMatchObject({ method: 'GET', path: '/v1/models?x=1&y=%2F' });
    });
  });

  it('serves its OpenAPI document at /v1/openapi.json without a key, itself (no service is asked)', async () => {
    const res = await fetch(`${base}/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths).toHaveProperty(['/v1/chat/completions']);
    expect(inference.seen).toHaveLength(0);
    expect((await fetch(`${base}/v1/openapi.json`, { method: 'POST' })).status).toBe(404);
  });

  describe('refusals in the envelope', () => {
    it('an unknown path is a 404 and reaches no service', async () => {
      const res = await fetch(`${base}/v1/unknown`, { headers: { authorization: `Bearer ${ADMIN}` } });
      await expectEnvelope(res, 404, 'route_not_found');
      expect(inference.seen).toHaveLength(0);
    });

    it.each<[string, Record<string, string>, string]>([
      ['no key', {}, 'missing_api_key'],
      ['a key only in x-api-key (chat takes Bearer)', { 'x-api-key': ADMIN }, 'missing_api_key'],
      ['a Basic authorization', { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` }, 'invalid_api_key'],
      ['"Bearer" without a key', { authorization: 'Bearer ' }, 'invalid_api_key'],
      ['a malformed bearer value', { authorization: `Bearer ${ADMIN} extra` }, 'invalid_api_key'],
      ['an unknown key', { authorization: 'Bearer sk-gw-v1-000000000000000000000000000000000000000000000000' }, 'invalid_api_key'],
    ])('%s is a 401 that reaches no service', async (_what, headers, code) => {
      const body = await expectEnvelope(await chat(headers), 401, code);
      expect(body.error.type).toBe('authentication_error');
      expect(inference.seen).toHaveLength(0);
    });

    it('a declared Content-Length over the limit is a 413 before anything is forwarded', async () => {
      const payload = Buffer.alloc(BODY_LIMIT + 1, 'a');
      const res = await rawRequest(edge.httpPort, {
        method: 'POST', path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'content-length': payload.length },
        write: async (req) => { req.end(payload); },
      });
      expect(res.status).toBe(413);
      const body = JSON.parse(res.body);
      expect(body).toMatchObject({ code: '413', error: { type: 'invalid_request_error', code: 'payload_too_large' } });
      expect(body.traceId).toBe(res.headers['x-trace-id']);
      expect(inference.seen).toHaveLength(0);
    });

    it('a chunked body without Content-Length is cut off with a 413 once it grows past the limit', async () => {
      let written = 0;
      let answered = false;
      const res = await rawRequest(edge.httpPort, {
        method: 'POST', path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        write: async (req) => {
          req.once('response', () => { answered = true; });
          // Up to four times the limit, slowly, stopping once the edge has answered.
          while (!answered && written < BODY_LIMIT * 4) {
            const chunk = Buffer.alloc(512, 'b');
            if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
            written += chunk.length;
            await sleep(10);
          }
          if (!answered) req.end();
        },
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ code: '413', error: { type: 'invalid_request_error', code: 'payload_too_large' } });
      // The upstream never got a whole request out of it.
      expect(inference.seen.filter((s) => s.complete)).toHaveLength(0);

      // A keep-alive client's next call works: the edge does not leave a dead connection in its pool.
      const after = await rawRequest(edge.httpPort, {
        method: 'GET', path: '/v1/models', headers: {}, write: async (req) => { req.end(); },
      });
      expect(after.status).toBe(200);
    });

    it('a chunked body over the limit sent in one go is a 413, and the client can go on', async () => {
      const res = await rawRequest(edge.httpPort, {
        method: 'POST', path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        write: async (req) => { req.end(Buffer.alloc(BODY_LIMIT * 2, 'c')); },
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ code: '413', error: { code: 'payload_too_large' } });
      expect(inference.seen.filter((s) => s.complete)).toHaveLength(0);
      const after = await rawRequest(edge.httpPort, {
        method: 'GET', path: '/v1/models', headers: {}, write: async (req) => { req.end(); },
      });
      expect(after.status).toBe(200);
    });

    it('a body that does not fit beside those held is a 503 server_busy with Retry-After, read by no service; it fits once they are answered', async () => {
      // An account may hold one chunked body (counted at the route's limit), and not another half of it beside.
      const busy = await startTestEdge({ MEDIA_BODY_LIMIT_BYTES: String(BODY_LIMIT), BODY_MEMORY_BUDGET_BYTES: String(BODY_LIMIT * 2) });
      const headers = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
      let finish!: () => void;
      const held = rawRequest(busy.httpPort, {
        method: 'POST', path: '/v1/chat/completions', headers: { ...headers, 'transfer-encoding': 'chunked' },
        write: async (req) => {
          req.write('{"model":"m",');
          await new Promise<void>((resolve) => { finish = resolve; });
          req.end('"messages":[]}');
        },
      });
      for (let i = 0; i < 200 && !inference.seen.some((s) => !s.complete); i++) await sleep(10);
      const heldBytes = (await (await fetch(`http://127.0.0.1:${busy.adminPort}/metrics`)).text()).match(/^gw_edge_body_bytes_held\{[^}]*\} (\d+)$/m)?.[1];
      expect(heldBytes).toBe(String(BODY_LIMIT));

      const body = JSON.stringify({ model: 'm', messages: [], user: 'x'.repeat(BODY_LIMIT / 2) });
      const send = () => fetch(`http://127.0.0.1:${busy.httpPort}/v1/chat/completions`, { method: 'POST', headers, body });
      const refused = await send();
      expect(refused.headers.get('retry-after')).toBe('1');
      await expectEnvelope(refused, 503, 'server_busy');
      expect(inference.seen).toHaveLength(1);

      finish();
      expect((await held).status).toBe(200);
      expect((await send()).status).toBe(200);
      const metrics = await (await fetch(`http://127.0.0.1:${busy.adminPort}/metrics`)).text();
      expect(metrics).toMatch(/^gw_edge_body_bytes_held\{[^}]*\} 0$/m);
      expect(metrics).toMatch(/^gw_edge_body_budget_refusals_total\{[^}]*\} 1$/m);
    });

    it('a chunked body within the limit streams through intact', async () => {
      const parts = ['{"model":"m",', '"messages":[{"role":"user",', '"content":"', 'x'.repeat(1000), '"}]}'];
      const res = await rawRequest(edge.httpPort, {
        method: 'POST', path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        write: async (req) => {
          for (const p of parts) { req.write(p); await sleep(5); }
          req.end();
        },
      });
      expect(res.status).toBe(200);
      expect(inference.seen[0].body).toBe(parts.join(''));
    });

    it('a service that is down is a 503', async () => {
      const lonely = await startTestEdge({ INFERENCE_HTTP_URL: `http://127.0.0.1:${await deadPort()}` });
      const res = await fetch(`http://127.0.0.1:${lonely.httpPort}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{}',
      });
      await expectEnvelope(res, 503, 'service_unavailable');
    });
  });

  describe('auth cache', () => {
    it('a key disabled through the edge is refused on the very next call (event, not TTL)', async () => {
      const { secret, hash } = await createKey();
      const auth = { authorization: `Bearer ${secret}` };
      expect((await chat(auth)).status).toBe(200);
      expect((await chat(auth)).status).toBe(200); // now served from the edge's cache

      const patch = await fetch(`${base}/v1/keys/${hash}`, {
        method: 'PATCH', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"disabled":true}',
      });
      expect(patch.status).toBe(200);
      expect((await json(patch)).data.disabled).toBe(true);

      const seenBefore = inference.seen.length;
      const next = await chat(auth);
      await expectEnvelope(next, 401, 'key_disabled');
      expect(inference.seen.length).toBe(seenBefore);

      // And it comes back as soon as it is enabled again.
      await fetch(`${base}/v1/keys/${hash}`, {
        method: 'PATCH', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"disabled":false}',
      });
      expect((await chat(auth)).status).toBe(200);
    });

    it('a message it cannot read on the key-change topic is skipped: a key disabled after it is still refused at once', async () => {
      await bus.publish(TOPICS.keys, [{ key: 'foreign', value: null }, { key: 'foreign', value: 'not an event' }]);
      const { secret, hash } = await createKey();
      const auth = { authorization: `Bearer ${secret}` };
      expect((await chat(auth)).status).toBe(200);
      const patch = await fetch(`${base}/v1/keys/${hash}`, {
        method: 'PATCH', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{"disabled":true}',
      });
      expect(patch.status).toBe(200);
      await expectEnvelope(await chat(auth), 401, 'key_disabled');
    });

    it('a key deleted through the edge is refused on the very next call', async () => {
      const { secret, hash } = await createKey();
      const auth = { authorization: `Bearer ${secret}` };
      expect((await chat(auth)).status).toBe(200);
      const del = await fetch(`${base}/v1/keys/${hash}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });
      expect(del.status).toBe(200);
      await expectEnvelope(await chat(auth), 401, 'invalid_api_key');
    });
  });

  describe('streaming', () => {
    it('passes server-sent events through unbuffered', async () => {
      let releaseLast!: () => void;
      const clientHasFirst = new Promise<void>((resolve) => { releaseLast = resolve; });
      let lastWrittenAt = 0;
      let firstReceivedAt = 0;
      inference.respond = (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write('data: {"n":1}\n\n');
        // The last chunk waits until the client has the first one (bounded, so a buffering edge fails, not hangs).
        void Promise.race([clientHasFirst, sleep(3000)]).then(async () => {
          res.write('data: {"n":2}\n\n');
          await sleep(50);
          lastWrittenAt = Date.now();
          res.end('data: [DONE]\n\n');
        });
      };

      const res = await chat({ authorization: `Bearer ${ADMIN}` }, '{"model":"m","stream":true,"messages":[]}');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/event-stream');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('data: {"n":1}')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      firstReceivedAt = Date.now();
      expect(lastWrittenAt).toBe(0); // the first event arrived while the upstream was still streaming
      releaseLast();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
      expect(firstReceivedAt).toBeLessThan(lastWrittenAt);
    });
  });
});
