import * as grpc from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, type Bus } from '@gw/bus';
import { startKeysService } from '@gw/keys';
import { createLogger, GatewayError, grpcClientOptions, IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { keysProto, type KeysServiceClient } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { Authenticator, extractSecret } from './authenticator';
import { createFsBlobStore } from '@gw/blobs';

const SECRET = 'authenticator-test-identity-secret-0123456789';

const logger = createLogger('authenticator-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const ADMIN = 'sk-gw-v1-authenticator-test-admin';
const ACCOUNT = 'acct_auth';
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('extractSecret', () => {
  it.each<[string, Record<string, string | undefined>, boolean, string]>([
    ['a bearer key', { authorization: 'Bearer sk-1' }, false, 'sk-1'],
    ['any case of "Bearer"', { authorization: 'bearer sk-1' }, false, 'sk-1'],
    ['trailing spaces', { authorization: 'Bearer   sk-1  ' }, false, 'sk-1'],
    ['x-api-key where allowed', { 'x-api-key': ' sk-2 ' }, true, 'sk-2'],
    ['Bearer over x-api-key', { authorization: 'Bearer sk-1', 'x-api-key': 'sk-2' }, true, 'sk-1'],
  ])('takes %s', (_what, headers, allowXApiKey, secret) => {
    expect(extractSecret(headers, allowXApiKey)).toBe(secret);
  });

  it.each<[string, Record<string, string | undefined>, boolean, string]>([
    ['nothing', {}, true, 'missing_api_key'],
    ['x-api-key where only Bearer is allowed', { 'x-api-key': 'sk-2' }, false, 'missing_api_key'],
    ['a blank x-api-key', { 'x-api-key': '  ' }, true, 'missing_api_key'],
    ['Basic credentials', { authorization: 'Basic dTpw' }, true, 'invalid_api_key'],
    ['a bare token', { authorization: 'sk-1' }, true, 'invalid_api_key'],
    ['two tokens', { authorization: 'Bearer sk-1 sk-2' }, true, 'invalid_api_key'],
  ])('refuses %s with a 401', (_what, headers, allowXApiKey, code) => {
    let err: unknown;
    try {
      extractSecret(headers, allowXApiKey);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 401, code });
  });
});

describe('Authenticator against the real keys service', () => {
  let dir: string;
  const stores: Store[] = [];
  let bus: Bus;
  let billing: RunningService;
  let keys: RunningService;
  const clients: grpc.Client[] = [];
  const rpcs: string[] = [];

  /** While set, the keys service's answers are held back until it resolves (`answered` fires when one arrives). */
  let hold: { gate: Promise<void>; answered: () => void } | null = null;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-auth-'));
    const open = (name: string) => {
      const s = createStore({ engine: 'embedded', dataDir: join(dir, name) });
      stores.push(s);
      return s;
    };
    bus = createBus({ engine: 'embedded', store: open('bus'), pollMs: 50 }, logger);
    billing = await startBillingService({
      config: billingConfigSchema.parse({ BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', GATEWAY_IDENTITY_SECRET: SECRET, SEED_ACCOUNTS: JSON.stringify([{ id: ACCOUNT, wallet_usd: '1' }]) }),
      store: open('billing'), bus, logger, blobs: createFsBlobStore(join(dir, 'billing-blobs')),
    });
    keys = await startKeysService({
      config: { KEYS_HTTP_PORT: 0, KEYS_GRPC_PORT: 0, BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, SEED_ACCOUNTS: [{ id: ACCOUNT, management_key: ADMIN }], GATEWAY_IDENTITY_SECRET: SECRET, BIND_HOST: '127.0.0.1' },
      store: open('keys'), bus, logger, announce: () => {},
    });
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await keys?.stop();
    await billing?.stop();
    await bus?.close();
    for (const s of stores) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  function keysClient(): KeysServiceClient {
    const interceptor: grpc.Interceptor = (options, nextCall) => {
      rpcs.push(options.method_definition.path);
      const h = hold;
      const listener = new grpc.ListenerBuilder()
        .withOnReceiveMessage((message, next) => {
          if (!h) return next(message);
          h.answered();
          void h.gate.then(() => next(message));
        })
        .withOnReceiveStatus((status, next) => {
          if (!h) return next(status);
          void h.gate.then(() => next(status));
        })
        .build();
      const requester = new grpc.RequesterBuilder().withStart((metadata, _listener, next) => next(metadata, listener)).build();
      return new grpc.InterceptingCall(nextCall(options), requester);
    };
    const client = new keysProto.gateway.keys.v1.KeysService(`127.0.0.1:${keys.grpcPort}`, grpc.credentials.createInsecure(), { ...grpcClientOptions, interceptors: [interceptor] });
    clients.push(client);
    return client;
  }

  /** Key management as the edge forwards it: straight to the keys service with a signed identity. */
  async function manage(method: string, path: string, body?: unknown) {
    const token = new IdentitySigner(SECRET, 'edge').mint({ method, path },
      { accountId: ACCOUNT, keyHash: sha256(ADMIN), isManagement: true, keyLimitMicros: null, keyLimitReset: null }, 'trace-auth-test');
    const res = await fetch(`http://127.0.0.1:${keys.httpPort}${path}`, {
      method,
      headers: { 'content-type': 'application/json', [IDENTITY_HEADER]: token },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status).toBeLessThan(300);
    return (await res.json()) as { key: string; data: { hash: string } };
  }

  const outcome = (p: Promise<unknown>) => p.then(() => 'allowed', (e: GatewayError) => `${e.status} ${e.code}`);

  it('resolves a key to its identity once, then answers from the cache', async () => {
    const created = await manage('POST', '/v1/keys', { name: 'cached', limit: 1.5, limit_reset: 'weekly' });
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0 });
    const before = rpcs.length;
    const id = await auth.authenticate(created.key, 't');
    expect(id).toEqual({ accountId: ACCOUNT, keyHash: created.data.hash, isManagement: false, keyLimitMicros: 1_500_000, keyLimitReset: 'weekly' });
    expect(await auth.authenticate(created.key, 't')).toEqual(id);
    expect(rpcs.length).toBe(before + 1);
  });

  it('concurrent first requests with one key share a single lookup', async () => {
    const created = await manage('POST', '/v1/keys', { name: 'burst' });
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0 });
    const before = rpcs.length;
    const ids = await Promise.all(Array.from({ length: 10 }, () => auth.authenticate(created.key, 't')));
    expect(new Set(ids.map((i) => i.keyHash))).toEqual(new Set([created.data.hash]));
    expect(rpcs.length).toBe(before + 1);
  });

  it('failures are not cached: an unknown key is asked about every time', async () => {
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0 });
    const before = rpcs.length;
    expect(await outcome(auth.authenticate('sk-gw-v1-nobody', 't'))).toBe('401 invalid_api_key');
    expect(await outcome(auth.authenticate('sk-gw-v1-nobody', 't'))).toBe('401 invalid_api_key');
    expect(rpcs.length).toBe(before + 2);
  });

  it('with a negative cache, a flood of one bad key costs at most one lookup per TTL', async () => {
    let now = 1_000_000;
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0, negativeTtlMs: 5_000, now: () => now });
    const before = rpcs.length;
    const results = await Promise.all(Array.from({ length: 50 }, () => outcome(auth.authenticate('sk-gw-v1-flood', 't'))));
    for (let i = 0; i < 50; i++) results.push(await outcome(auth.authenticate('sk-gw-v1-flood', 't')));
    expect(new Set(results)).toEqual(new Set(['401 invalid_api_key']));
    expect(rpcs.length).toBe(before + 1);
    now += 5_001;
    expect(await outcome(auth.authenticate('sk-gw-v1-flood', 't'))).toBe('401 invalid_api_key');
    expect(rpcs.length).toBe(before + 2);
  });

  it('the negative cache is bounded: the least recently refused key is forgotten first', async () => {
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0, negativeTtlMs: 60_000, negativeMaxEntries: 2 });
    for (const k of ['sk-gw-v1-a', 'sk-gw-v1-b', 'sk-gw-v1-c']) await outcome(auth.authenticate(k, 't'));
    const before = rpcs.length;
    await outcome(auth.authenticate('sk-gw-v1-c', 't'));
    await outcome(auth.authenticate('sk-gw-v1-b', 't'));
    expect(rpcs.length).toBe(before);
    await outcome(auth.authenticate('sk-gw-v1-a', 't'));
    expect(rpcs.length).toBe(before + 1);
  });

  it('a key-change event forgets a refusal: a re-enabled key works at once', async () => {
    const created = await manage('POST', '/v1/keys', { name: 'off and on' });
    await manage('PATCH', `/v1/keys/${created.data.hash}`, { disabled: true });
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0, negativeTtlMs: 60_000 });
    expect(await outcome(auth.authenticate(created.key, 't'))).toBe('401 key_disabled');
    await manage('PATCH', `/v1/keys/${created.data.hash}`, { disabled: false });
    expect(await outcome(auth.authenticate(created.key, 't'))).toBe('401 key_disabled'); // remembered: no event yet
    auth.invalidate(created.data.hash);
    expect(await outcome(auth.authenticate(created.key, 't'))).toBe('allowed');
  });

  it('an invalidation drops the cached key at once', async () => {
    const created = await manage('POST', '/v1/keys', { name: 'to disable' });
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0 });
    expect(await outcome(auth.authenticate(created.key, 't'))).toBe('allowed');
    await manage('PATCH', `/v1/keys/${created.data.hash}`, { disabled: true });
    expect(await outcome(auth.authenticate(created.key, 't'))).toBe('allowed'); // cached: no event yet
    auth.invalidate(created.data.hash);
    expect(await outcome(auth.authenticate(created.key, 't'))).toBe('401 key_disabled');
  });

  it('a lookup answered before an invalidation does not put the stale key back in the cache', async () => {
    const created = await manage('POST', '/v1/keys', { name: 'raced' });
    const auth = new Authenticator(keysClient(), { ttlMs: 60_000, staleWindowMs: 0 });
    let release!: () => void;
    let answered!: () => void;
    const hasAnswer = new Promise<void>((resolve) => { answered = resolve; });
    hold = { gate: new Promise<void>((resolve) => { release = resolve; }), answered };
    // A request authenticates; the keys service answers "enabled", but the answer is still on its way...
    const inFlight = outcome(auth.authenticate(created.key, 't'));
    await hasAnswer;
    hold = null;
    // ...when the key is disabled and its KeyChanged event reaches the edge.
    await manage('PATCH', `/v1/keys/${created.data.hash}`, { disabled: true });
    auth.invalidate(created.data.hash);
    // A request arriving now must not ride on the lookup that started before the change.
    const afterChange = outcome(auth.authenticate(created.key, 't'));
    release();
    expect(await inFlight).toBe('allowed'); // it was authenticated before the change: fine
    expect(await afterChange).toBe('401 key_disabled');
    expect(await outcome(auth.authenticate(created.key, 't'))).toBe('401 key_disabled');
  });
});
