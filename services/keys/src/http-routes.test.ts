import { IDENTITY_HEADER, type RunningService } from '@gw/platform';
import { startKeysService } from './app';
import { hashSecret } from './key-secret';
import {
  deadAddress, KEYS_TEST_SECRET, openEngines, startBillingStub, tempDir, testClock, testLogger, testSigner, watchKeyChanges, type BillingStub, type TestEngines,
} from './test-support';

const ADMIN = 'sk-gw-v1-http-test-admin-a';
const OTHER_ADMIN = 'sk-gw-v1-http-test-admin-b';
const logger = testLogger();

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('key HTTP routes', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let engines: TestEngines;
  let billing: BillingStub;
  let service: RunningService;
  const clock = testClock();

  async function start(billingAddress: string): Promise<RunningService> {
    return startKeysService({
      config: {
        KEYS_HTTP_PORT: 0, KEYS_GRPC_PORT: 0, BILLING_GRPC_ADDR: billingAddress,
        SEED_ACCOUNTS: [{ id: 'acct_a', management_key: ADMIN }, { id: 'acct_b', management_key: OTHER_ADMIN }],
        GATEWAY_IDENTITY_SECRET: KEYS_TEST_SECRET, BIND_HOST: '127.0.0.1',
      },
      store: engines.store, bus: engines.bus, logger, now: clock.now, announce: () => undefined,
    });
  }

  beforeAll(async () => {
    dir = await tempDir();
    engines = await openEngines(dir.path, logger);
    billing = await startBillingStub();
    service = await start(billing.address);
  });

  afterAll(async () => {
    await service.stop();
    await billing.stop();
    await engines.close();
    await dir.remove();
  });

  /** Calls the service as the edge would after authenticating `secret` (no secret: no identity token). */
  async function call(method: string, path: string, opts: { as?: string; account?: string; body?: unknown; rawBody?: string; port?: number; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
    if (opts.as) {
      headers[IDENTITY_HEADER] = testSigner().mint({ method, path }, {
        accountId: opts.account ?? (opts.as === OTHER_ADMIN ? 'acct_b' : 'acct_a'), keyHash: hashSecret(opts.as),
        isManagement: true, keyLimitMicros: null, keyLimitReset: null,
      }, 'trace-keys-test');
    }
    const res = await fetch(`http://127.0.0.1:${opts.port ?? service.httpPort}${path}`, {
      method, headers, body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  const create = async (body: Json, as = ADMIN) => {
    const res = await call('POST', '/v1/keys', { as, body });
    expect(res.status).toBe(201);
    return { key: res.body.data as Json, secret: res.body.key as string };
  };

  it('creates a key (201, secret only here) and reads it back as the key itself', async () => {
    const { key, secret } = await create({ name: 'reader', limit: 2.5, limit_reset: 'weekly', expires_at: '2031-01-01T00:00:00Z' });
    expect(Object.keys(key).sort()).toEqual(['created_at', 'disabled', 'expires_at', 'hash', 'label', 'limit', 'limit_remaining',
      'limit_reset', 'name', 'requests_per_minute', 'tokens_per_minute', 'updated_at', 'usage', 'usage_daily', 'usage_monthly', 'usage_weekly'].sort());
    expect(key).toMatchObject({ hash: hashSecret(secret), limit: 2.5, limit_remaining: 2.5, limit_reset: 'weekly', expires_at: '2031-01-01T00:00:00.000Z' });

    billing.usage.set(key.hash, { total: 1_000_000, daily: 100_000, weekly: 700_000, monthly: 900_000 });
    const self = await call('GET', '/v1/key', { as: secret });
    expect(self.status).toBe(200);
    expect(self.body.data).toMatchObject({ hash: key.hash, is_management_key: false, usage: 1, usage_weekly: 0.7, limit_remaining: 1.8 });
    expect(JSON.stringify(self.body)).not.toContain(secret);

    const admin = await call('GET', '/v1/key', { as: ADMIN });
    expect(admin.body.data).toMatchObject({ name: 'Bootstrap management key', is_management_key: true });
  });

  it('lists with offset and include_disabled; patches and deletes by hash', async () => {
    const { key } = await create({ name: 'to-change' });
    const patched = await call('PATCH', `/v1/keys/${key.hash}`, { as: ADMIN, body: { name: 'changed', disabled: true, limit: 1, limit_reset: 'daily' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ hash: key.hash, name: 'changed', disabled: true, limit: 1, limit_reset: 'daily' });

    const active = await call('GET', '/v1/keys', { as: ADMIN });
    const all = await call('GET', '/v1/keys?include_disabled=true', { as: ADMIN });
    expect(active.body.data.map((k: Json) => k.hash)).not.toContain(key.hash);
    expect(all.body.data.map((k: Json) => k.hash)).toContain(key.hash);
    const skipped = await call('GET', '/v1/keys?include_disabled=true&offset=1', { as: ADMIN });
    expect(skipped.body.data).toEqual(all.body.data.slice(1));

    expect(await call('DELETE', `/v1/keys/${key.hash}`, { as: ADMIN })).toEqual({ status: 200, body: { deleted: true } });
    expect((await call('DELETE', `/v1/keys/${key.hash}`, { as: ADMIN })).status).toBe(404);
  });

  it('answers 404 for unknown hashes and for keys of another account', async () => {
    const { key: theirs } = await create({ name: 'theirs' }, OTHER_ADMIN);
    for (const hash of [hashSecret('nobody'), 'not-a-hash', theirs.hash]) {
      const patched = await call('PATCH', `/v1/keys/${hash}`, { as: ADMIN, body: { disabled: true } });
      expect(patched).toEqual({ status: 404, body: { error: { code: 404, message: 'No key with this hash', param: 'hash' } } });
      expect((await call('DELETE', `/v1/keys/${hash}`, { as: ADMIN })).status).toBe(404);
    }
    expect((await call('GET', '/v1/keys', { as: OTHER_ADMIN })).body.data.map((k: Json) => k.hash)).toContain(theirs.hash);
  });

  it('refuses management to an ordinary key (403) and requests without identity (401)', async () => {
    const { key, secret } = await create({ name: 'ordinary' });
    for (const [method, path, body] of [['GET', '/v1/keys'], ['POST', '/v1/keys', { name: 'x' }], ['PATCH', `/v1/keys/${key.hash}`, { name: 'x' }], ['DELETE', `/v1/keys/${key.hash}`]] as const) {
      const res = await call(method, path, { as: secret, body });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 403, param: null });
    }
    expect(await call('GET', '/v1/key')).toEqual({ status: 401, body: { error: { code: 401, message: expect.stringMatching(/identity/), param: null } } });
    // The headers the edge used to send are no identity at all.
    const plain = { 'x-gw-account-id': 'acct_a', 'x-gw-key-hash': hashSecret(ADMIN), 'x-gw-key-management': 'true' };
    expect((await call('GET', '/v1/keys', { headers: plain })).body).toEqual({ error: { code: 401, message: expect.any(String), param: null } });
    expect((await call('POST', '/v1/keys', { headers: plain, body: { name: 'sneaky' } })).status).toBe(401);
    expect((await call('GET', '/v1/keys', { as: ADMIN, account: 'acct_b' })).status).toBe(401);
  });

  it.each([
    ['POST', {}, 'name'],
    ['POST', { name: 'x'.repeat(129) }, 'name'],
    ['POST', { name: 'n', limit: 1.1234567 }, 'limit'],
    ['POST', { name: 'n', limit: -2 }, 'limit'],
    ['POST', { name: 'n', limit_reset: 'hourly' }, 'limit_reset'],
    ['POST', { name: 'n', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
    ['POST', { name: 'n', is_management: true }, 'is_management'],
    ['PATCH', { disabled: 'no' }, 'disabled'],
    ['PATCH', { expires_at: null }, 'expires_at'],
    ['PATCH', { name: 'ok', limit: 'lots' }, 'limit'],
  ])('%s %j -> 400 naming %s, nothing written', async (method, body, param) => {
    const { key } = await create({ name: 'target' });
    const before = await call('GET', '/v1/keys?include_disabled=true', { as: ADMIN });
    const path = method === 'POST' ? '/v1/keys' : `/v1/keys/${key.hash}`;
    const res = await call(method, path, { as: ADMIN, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 400, param });
    expect(await call('GET', '/v1/keys?include_disabled=true', { as: ADMIN })).toEqual(before);
  });

  it('names the param of bad list queries; an unparseable body is a 400 in the key shape', async () => {
    expect((await call('GET', '/v1/keys?offset=-1', { as: ADMIN })).body.error).toMatchObject({ code: 400, param: 'offset' });
    expect((await call('GET', '/v1/keys?include_disabled=maybe', { as: ADMIN })).body.error).toMatchObject({ code: 400, param: 'include_disabled' });
    const broken = await call('POST', '/v1/keys', { as: ADMIN, rawBody: '{"name":' });
    expect(broken).toEqual({ status: 400, body: { error: { code: 400, message: 'Request body is not valid JSON', param: null } } });
  });

  it.each(['PATCH', 'DELETE'])('%s of a hash that is not validly percent-encoded is a 400 naming hash', async (method) => {
    const res = await call(method, '/v1/keys/%ZZ', { as: ADMIN, body: { disabled: true } });
    expect(res).toEqual({ status: 400, body: { error: { code: 400, message: expect.any(String), param: 'hash' } } });
  });

  it('publishes KeyChanged for PATCH and DELETE', async () => {
    const { key } = await create({ name: 'watched' });
    const watch = await watchKeyChanges(engines.bus);
    await call('PATCH', `/v1/keys/${key.hash}`, { as: ADMIN, body: { disabled: true } });
    await call('DELETE', `/v1/keys/${key.hash}`, { as: ADMIN });
    const mine = (await watch.waitFor(2)).filter((e) => e.key_hash === key.hash);
    expect(mine.map((e) => e.change)).toEqual(['updated', 'deleted']);
    await watch.stop();
  });

  it('answers 503 when billing is unreachable, never made-up usage', async () => {
    const blind = await start(await deadAddress());
    try {
      const res = await call('GET', '/v1/keys', { as: ADMIN, port: blind.httpPort });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 503, param: null });
      // Creating needs no usage, so it still works (and the secret is not lost to a failed usage call).
      expect((await call('POST', '/v1/keys', { as: ADMIN, port: blind.httpPort, body: { name: 'while billing is down' } })).status).toBe(201);
    } finally {
      await blind.stop();
    }
  });

  it('keeps plain JSON for unknown key routes and the envelope elsewhere', async () => {
    expect(await call('GET', `/v1/keys/${hashSecret('x')}`, { as: ADMIN })).toMatchObject({ status: 404, body: { error: { code: 404 } } });
    const other = await call('GET', '/v1/elsewhere', { as: ADMIN });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('404');
  });
});
