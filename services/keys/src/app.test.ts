import * as grpc from '@grpc/grpc-js';
import { callUnary, type RunningService } from '@gw/platform';
import { healthProto, keysProto, type AuthenticateResult, type KeysServiceClient } from '@gw/proto';
import { startKeysService } from './app';
import { hashSecret } from './key-secret';
import { KEYS_TEST_SECRET, openEngines, startBillingStub, tempDir, testLogger, type BillingStub } from './test-support';

const ADMIN = 'sk-gw-v1-app-test-admin';
const logger = testLogger();

describe('startKeysService', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let billing: BillingStub;

  beforeAll(async () => {
    dir = await tempDir();
    billing = await startBillingStub();
  });
  afterAll(async () => {
    await billing.stop();
    await dir.remove();
  });

  /** `down`: engines whose ping fails, as during an outage, while the service runs on the real ones. */
  async function run<T>(announced: string[], fn: (svc: RunningService) => Promise<T>, down: { bus?: boolean; store?: boolean } = {}): Promise<T> {
    const engines = await openEngines(dir.path, logger);
    const bus = down.bus ? { ...engines.bus, ping: async () => false } : engines.bus;
    const store = down.store ? Object.assign(Object.create(engines.store) as typeof engines.store, { ping: async () => false }) : engines.store;
    const svc = await startKeysService({
      config: { KEYS_HTTP_PORT: 0, KEYS_GRPC_PORT: 0, BILLING_GRPC_ADDR: billing.address, SEED_ACCOUNTS: [{ id: 'acct_seeded', management_key: ADMIN }, { id: 'acct_local' }],
        GATEWAY_IDENTITY_SECRET: KEYS_TEST_SECRET, BIND_HOST: '127.0.0.1' },
      store, bus, logger, announce: (l) => { announced.push(l); },
    });
    try {
      return await fn(svc);
    } finally {
      await svc.stop();
      await engines.close();
    }
  }

  it('serves Authenticate and health over gRPC, and bootstraps keys only once across restarts', async () => {
    const first: string[] = [];
    const localSecret = await run(first, async (svc) => {
      const client = new keysProto.gateway.keys.v1.KeysService(`127.0.0.1:${svc.grpcPort}`, grpc.credentials.createInsecure()) as KeysServiceClient;
      const health = new healthProto.grpc.health.v1.Health(`127.0.0.1:${svc.grpcPort}`, grpc.credentials.createInsecure());
      try {
        const ok = await callUnary<{ secret: string }, AuthenticateResult>(client, client.Authenticate, { secret: ADMIN });
        expect(ok).toEqual({ account_id: 'acct_seeded', key_hash: hashSecret(ADMIN), is_management: true, limit_micros: 0, has_limit: false, limit_reset: '', expires_at_ms: 0, requests_per_minute: 0, tokens_per_minute: 0 });

        const refused = await new Promise<grpc.ServiceError | null>((resolve) => client.Authenticate({ secret: 'sk-gw-v1-nope' }, (err) => resolve(err)));
        expect(refused?.code).toBe(grpc.status.UNAUTHENTICATED);

        const status = await new Promise((resolve, reject) => health.Check({ service: '' }, (err, res) => (err ? reject(err) : resolve(res?.status))));
        expect(status).toBe('SERVING');
        expect((await fetch(`http://127.0.0.1:${svc.httpPort}/readyz`)).status).toBe(200);
      } finally {
        client.close();
        health.close();
      }
      return /: (sk-gw-v1-[0-9a-f]{48})$/.exec(first.find((l) => l.includes('acct_local')) ?? '')?.[1];
    });
    expect(first).toHaveLength(1);
    expect(localSecret).toBeDefined();

    const second: string[] = [];
    await run(second, async (svc) => {
      const client = new keysProto.gateway.keys.v1.KeysService(`127.0.0.1:${svc.grpcPort}`, grpc.credentials.createInsecure()) as KeysServiceClient;
      try {
        const res = await callUnary<{ secret: string }, AuthenticateResult>(client, client.Authenticate, { secret: localSecret! });
        expect(res).toMatchObject({ account_id: 'acct_local', is_management: true });
      } finally {
        client.close();
      }
    });
    expect(second).toEqual([]);
  });

  const readyz = async (svc: RunningService) => {
    const res = await fetch(`http://127.0.0.1:${svc.httpPort}/readyz`);
    return { status: res.status, body: await res.json() };
  };

  it('stays ready with the bus down (key changes still saved), reporting it degraded', async () => {
    await run([], async (svc) => {
      expect(await readyz(svc)).toEqual({ status: 200, body: { ready: true, checks: { store: true, bus: false }, degraded: ['bus'] } });
    }, { bus: true });
  });

  it('is not ready without its store', async () => {
    await run([], async (svc) => {
      expect(await readyz(svc)).toEqual({ status: 503, body: { ready: false, checks: { store: false, bus: true }, degraded: [] } });
    }, { store: true });
  });
});
