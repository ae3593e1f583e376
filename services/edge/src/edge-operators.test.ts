import { createFsBlobStore } from '@gw/blobs';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, type Bus } from '@gw/bus';
import { startKeysService } from '@gw/keys';
import { createLogger, type RunningService } from '@gw/platform';
import { TOPICS } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { startEdge, type RunningEdge } from './app';
import { edgeConfigSchema } from './config';

// Some tests wait for the start of the next minute (rate windows are whole minutes).
jest.setTimeout(90_000);

const logger = createLogger('edge-operators-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const SECRET = 'edge-operators-test-identity-secret-0123456789';
const ADMIN = 'sk-gw-v1-edge-operators-test-management-key';
const ACCOUNT = 'acct_edge_ops';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The rate-limit windows are whole minutes: a test counting within one starts early enough in it. */
async function earlyInAMinute(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
}

describe('the edge for operators: rate limits, negative key cache, CORS', () => {
  let dir: string;
  const stores: Store[] = [];
  let bus: Bus;
  let billing: RunningService;
  let keys: RunningService;
  let upstream: Server;
  let upstreamUrl: string;
  let forwarded = 0;
  const edges: RunningEdge[] = [];

  const openStore = (name: string) => {
    const s = createStore({ engine: 'embedded', dataDir: join(dir, name) });
    stores.push(s);
    return s;
  };

  async function startTestEdge(env: Record<string, string>): Promise<{ base: string; admin: string }> {
    const edge = await startEdge({
      config: edgeConfigSchema.parse({
        EDGE_PORT: '0', EDGE_ADMIN_PORT: '0', GATEWAY_IDENTITY_SECRET: SECRET,
        KEYS_GRPC_ADDR: `127.0.0.1:${keys.grpcPort}`, KEYS_HTTP_URL: `http://127.0.0.1:${keys.httpPort}`,
        INFERENCE_HTTP_URL: upstreamUrl, BILLING_HTTP_URL: upstreamUrl, ...env,
      }),
      bus, logger,
    });
    edges.push(edge);
    return { base: `http://127.0.0.1:${edge.httpPort}`, admin: `http://127.0.0.1:${edge.adminPort}` };
  }

  async function createKey(settings: Record<string, unknown> = {}): Promise<string> {
    const { base } = await startTestEdge({});
    const res = await fetch(`${base}/v1/keys`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ops', ...settings }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { key: string }).key;
  }

  const chat = (base: string, key: string) => fetch(`${base}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"model":"m","messages":[]}',
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-edge-ops-'));
    bus = createBus({ engine: 'embedded', store: openStore('bus'), pollMs: 50 }, logger);
    billing = await startBillingService({
      config: billingConfigSchema.parse({ BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', GATEWAY_IDENTITY_SECRET: SECRET, SEED_ACCOUNTS: JSON.stringify([{ id: ACCOUNT, wallet_usd: '10' }]) }),
      store: openStore('billing'), bus, logger, blobs: createFsBlobStore(join(dir, 'billing-blobs')),
    });
    keys = await startKeysService({
      config: { KEYS_HTTP_PORT: 0, KEYS_GRPC_PORT: 0, BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, SEED_ACCOUNTS: [{ id: ACCOUNT, management_key: ADMIN }], GATEWAY_IDENTITY_SECRET: SECRET, BIND_HOST: '127.0.0.1' },
      store: openStore('keys'), bus, logger, announce: () => {},
    });
    upstream = createServer((req, res) => {
      forwarded++;
      req.resume();
      req.on('end', () => { res.setHeader('content-type', 'application/json'); res.end('{"ok":true}'); });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const e of edges) await e.stop();
    upstream?.closeAllConnections();
    await new Promise((r) => upstream?.close(r));
    await keys?.stop();
    await billing?.stop();
    await bus?.close();
    for (const s of stores) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 429 in the error envelope with Retry-After and x-ratelimit-* headers once a key used its requests per minute', async () => {
    const key = await createKey();
    const { base } = await startTestEdge({ RATE_LIMIT_KEY_RPM: '2' });
    await earlyInAMinute();
    const before = forwarded;
    const first = await chat(base, key);
    const second = await chat(base, key);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect([first.headers.get('x-ratelimit-remaining-requests'), second.headers.get('x-ratelimit-remaining-requests')]).toEqual(['1', '0']);
    expect(first.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);

    const refused = await chat(base, key);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const body = await refused.json() as { code: string; error: { type: string; code: string; message: string } };
    expect(body).toMatchObject({ code: '429', error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
    expect(body.error.message).toMatch(/2 requests per minute for this key/);
    expect(forwarded - before).toBe(2);
  });

  it('counts a call\'s tokens from its usage event and refuses the key once its tokens per minute are used', async () => {
    const key = await createKey();
    const { base, admin } = await startTestEdge({ RATE_LIMIT_KEY_TPM: '100' });
    await waitFor('the usage consumer to join', async () => {
      const ready = await (await fetch(`${admin}/readyz`)).json() as { degraded: string[] };
      return !ready.degraded.includes('rate-limit-usage');
    });
    await earlyInAMinute();
    const first = await chat(base, key);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe('100');
    await bus.publish(TOPICS.usage, [{ key: ACCOUNT, value: {
      request_id: 'br-00000000-0000-4000-8000-000000000001', account_id: ACCOUNT, key_hash: sha256(key), model: 'm', provider: 'p',
      usage: { prompt_tokens: 70, completion_tokens: 40, total_tokens: 110 }, status: 'succeeded',
    } as never }]);
    let last: Response | undefined;
    await waitFor('the tokens to count', async () => { last = await chat(base, key); return last.status === 429; });
    expect(last!.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(((await last!.json()) as { error: { message: string } }).error.message).toMatch(/100 tokens per minute/);
    // Reading (a job, the models) spends no tokens: still answered.
    const read = await fetch(`${base}/v1/async/chat/completions/job-1`, { headers: { authorization: `Bearer ${key}` } });
    expect(read.status).toBe(200);
    expect(read.headers.get('x-ratelimit-remaining-tokens')).toBeNull();
  });

  it('a key\'s own limits replace the configured defaults, also where no default is set', async () => {
    const strict = await createKey({ requests_per_minute: 1 });
    const roomy = await createKey({ requests_per_minute: 5 });
    const plain = await createKey();
    const { base } = await startTestEdge({ RATE_LIMIT_KEY_RPM: '2' });
    const { base: noDefaults } = await startTestEdge({});
    await earlyInAMinute();
    const statuses = async (b: string, key: string, n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push((await chat(b, key)).status);
      return out;
    };
    expect(await statuses(base, strict, 2)).toEqual([200, 429]);
    expect(await statuses(base, roomy, 4)).toEqual([200, 200, 200, 200]);
    expect(await statuses(base, plain, 3)).toEqual([200, 200, 429]);
    // Memory counters are per edge instance here (no shared store): a fresh edge, no defaults.
    expect(await statuses(noDefaults, strict, 2)).toEqual([200, 429]);
    expect(await statuses(noDefaults, plain, 4)).toEqual([200, 200, 200, 200]);
  });

  it('asks the keys service about a bad key once however many requests carry it', async () => {
    const { base, admin } = await startTestEdge({ AUTH_NEGATIVE_CACHE_TTL_MS: '60000' });
    const lookups = async () => {
      const text = await (await fetch(`${admin}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('gw_edge_key_lookups_total{outcome="refused"'));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await chat(base, 'sk-gw-v1-not-a-key')).status);
    statuses.push(...await Promise.all(Array.from({ length: 20 }, async () => (await chat(base, 'sk-gw-v1-not-a-key')).status)));
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(await lookups()).toBe(1);
  });

  it('CORS is off by default: no Access-Control headers', async () => {
    const { base } = await startTestEdge({});
    const res = await fetch(`${base}/v1/models`, { headers: { origin: 'https://console.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('CORS on: a preflight from an allowed origin is answered at the edge, without credentials; others get no grant', async () => {
    const { base } = await startTestEdge({ CORS_ALLOWED_ORIGINS: 'https://console.example, https://other.example' });
    const before = forwarded;
    const preflight = (origin: string) => fetch(`${base}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    const ok = await preflight('https://console.example');
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://console.example');
    expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
    expect(ok.headers.get('access-control-allow-headers')).toBe('authorization,content-type');
    expect(ok.headers.get('access-control-allow-credentials')).toBeNull();
    const stranger = await preflight('https://evil.example');
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    expect(forwarded).toBe(before);

    const models = await fetch(`${base}/v1/models`, { headers: { origin: 'https://other.example' } });
    expect(models.headers.get('access-control-allow-origin')).toBe('https://other.example');
    expect(models.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining-requests');
  });
});
