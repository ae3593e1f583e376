import * as grpc from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import {
  AuthenticationError, createLogger, GatewayError, grpcClientOptions, startGrpcServer, UnavailableError, unaryHandler, type GrpcServerHandle,
} from '@gw/platform';
import { keysProto, type KeysServiceClient, type KeysServiceHandlers } from '@gw/proto';
import { Authenticator } from './authenticator';

const logger = createLogger('authenticator-stale-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const T0 = Date.parse('2026-11-02T10:00:00Z');
const TTL_MS = 1_000;
const STALE_WINDOW_MS = 10_000;
const SECRET = 'sk-gw-v1-stale-window-test';
const HASH = createHash('sha256').update(SECRET).digest('hex');

/** What the keys service does with the next Authenticate calls. */
type KeysBehaviour = 'valid' | 'unavailable' | 'store-down' | 'disabled' | 'expired' | 'silent';

/**
 * A keys gRPC server under the test's control, answering as the real one does: an identity, a 401 verdict,
 * or a failure that is no verdict (the service is down, its store is down, or it does not answer in time).
 */
describe('Authenticator while the keys service cannot answer', () => {
  let behaviour: KeysBehaviour;
  let keyExpiresAtMs: number;
  let calls: number;
  let server: GrpcServerHandle;
  let client: KeysServiceClient;
  let clock: number;

  beforeAll(async () => {
    const handlers: KeysServiceHandlers = {
      Authenticate: unaryHandler(logger, async () => {
        calls++;
        switch (behaviour) {
          case 'valid':
            return { account_id: 'acct_s', key_hash: HASH, is_management: false, limit_micros: 0, has_limit: false, limit_reset: '', expires_at_ms: keyExpiresAtMs };
          case 'unavailable': throw new UnavailableError('keys store unavailable');
          case 'store-down': throw new Error('connection to the store was reset');
          case 'disabled': throw new AuthenticationError('API key is disabled', 'key_disabled');
          case 'expired': throw new AuthenticationError('API key has expired', 'key_expired');
          case 'silent': return new Promise<never>(() => undefined);
        }
      }),
    };
    server = await startGrpcServer('127.0.0.1:0', (s) => s.addService(keysProto.gateway.keys.v1.KeysService.service, handlers));
    client = new keysProto.gateway.keys.v1.KeysService(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), grpcClientOptions);
  });

  afterAll(async () => {
    client.close();
    await server.shutdown(0);
  });

  let auth: Authenticator;
  beforeEach(() => {
    behaviour = 'valid';
    keyExpiresAtMs = 0;
    calls = 0;
    clock = T0;
    auth = new Authenticator(client, { ttlMs: TTL_MS, staleWindowMs: STALE_WINDOW_MS, now: () => clock, deadlineMs: 1_000 });
  });

  const outcome = (p: Promise<unknown>) => p.then(() => 'allowed', (e: GatewayError) => `${e.status} ${e.code}`);
  const attempt = () => outcome(auth.authenticate(SECRET, 't'));

  it.each<KeysBehaviour>(['unavailable', 'store-down'])('serves a recently verified key past its TTL when keys fails (%s)', async (failure) => {
    expect(await attempt()).toBe('allowed');
    behaviour = failure;
    clock = T0 + TTL_MS + 1;
    expect(await attempt()).toBe('allowed');
    expect(calls).toBe(2); // it did ask: stale is only the answer when keys cannot give one
  });

  it('serves it stale when keys does not answer within the deadline', async () => {
    expect(await attempt()).toBe('allowed');
    behaviour = 'silent';
    clock = T0 + TTL_MS + 1;
    expect(await attempt()).toBe('allowed');
  });

  it('refuses at once after a key-change event for that key', async () => {
    expect(await attempt()).toBe('allowed');
    behaviour = 'unavailable';
    auth.invalidate(HASH);
    expect(await attempt()).toBe('503 service_unavailable');
  });

  it('refuses once the stale window has passed', async () => {
    expect(await attempt()).toBe('allowed');
    behaviour = 'unavailable';
    clock = T0 + TTL_MS + STALE_WINDOW_MS - 1;
    expect(await attempt()).toBe('allowed');
    clock = T0 + TTL_MS + STALE_WINDOW_MS;
    expect(await attempt()).toBe('503 service_unavailable');
  });

  it('never serves stale a key the keys service said is not valid', async () => {
    expect(await attempt()).toBe('allowed');
    behaviour = 'disabled';
    clock = T0 + TTL_MS + 1;
    expect(await attempt()).toBe('401 key_disabled');
    behaviour = 'unavailable';
    expect(await attempt()).toBe('503 service_unavailable');
  });

  it('a key that expires while cached is refused on the next call after its expiry, not when the TTL ends', async () => {
    keyExpiresAtMs = T0 + TTL_MS / 2;
    expect(await attempt()).toBe('allowed');
    clock = keyExpiresAtMs - 1;
    expect(await attempt()).toBe('allowed');
    expect(calls).toBe(1); // still fresh: answered from the cache
    behaviour = 'expired';
    clock = keyExpiresAtMs;
    expect(await attempt()).toBe('401 key_expired');
    expect(calls).toBe(2); // not from the cache: the keys service gave its verdict
  });

  it('a key that expires inside the stale window is not served stale past its expiry', async () => {
    keyExpiresAtMs = T0 + TTL_MS + 2_000;
    expect(await attempt()).toBe('allowed');
    behaviour = 'unavailable';
    clock = keyExpiresAtMs - 1;
    expect(await attempt()).toBe('allowed');
    clock = keyExpiresAtMs;
    expect(await attempt()).toBe('503 service_unavailable');
  });

  it('with no stale window, a keys failure after the TTL is a 503 as before', async () => {
    auth = new Authenticator(client, { ttlMs: TTL_MS, staleWindowMs: 0, now: () => clock });
    expect(await attempt()).toBe('allowed');
    behaviour = 'unavailable';
    clock = T0 + TTL_MS;
    expect(await attempt()).toBe('503 service_unavailable');
  });
});

describe('Authenticator when the keys server is stopped and started again', () => {
  it('serves the verified key stale while nothing listens, and asks again once keys is back', async () => {
    let calls = 0;
    const handlers: KeysServiceHandlers = {
      Authenticate: unaryHandler(logger, async () => {
        calls++;
        return { account_id: 'acct_s', key_hash: HASH, is_management: false, limit_micros: 0, has_limit: false, limit_reset: '', expires_at_ms: 0 };
      }),
    };
    const register = (s: grpc.Server) => s.addService(keysProto.gateway.keys.v1.KeysService.service, handlers);
    let server = await startGrpcServer('127.0.0.1:0', register);
    const port = server.port;
    const client = new keysProto.gateway.keys.v1.KeysService(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), grpcClientOptions);
    let clock = T0;
    const auth = new Authenticator(client, { ttlMs: TTL_MS, staleWindowMs: STALE_WINDOW_MS, now: () => clock, deadlineMs: 1_000 });
    try {
      await auth.authenticate(SECRET, 't');
      await server.shutdown(0);
      clock = T0 + TTL_MS + 1;
      expect((await auth.authenticate(SECRET, 't')).accountId).toBe('acct_s');
      expect(calls).toBe(1);

      server = await startGrpcServer(`127.0.0.1:${port}`, register);
      const deadline = Date.now() + 30_000;
      // The channel reconnects with back-off; each attempt meanwhile is still served stale.
      while (calls < 2 && Date.now() < deadline) {
        await auth.authenticate(SECRET, 't');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(calls).toBe(2);
    } finally {
      client.close();
      await server.shutdown(0);
    }
  }, 40_000);
});
