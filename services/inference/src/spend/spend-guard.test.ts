import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, type Bus, type Subscription } from '@gw/bus';
import { createLogger, grpcClientOptions, IdentitySigner, serviceIdentityInterceptor, type GatewayError, type Identity, type RunningService } from '@gw/platform';
import { billingProto, TOPICS, type BalanceChanged, type BillingServiceClient, type UsageEvent } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { SpendGuard } from './spend-guard';

const logger = createLogger('spend-guard-test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** 1 USD per million tokens both ways: one micro per token, so a usage event of N tokens costs N micros. */
const CATALOG = {
  providers: { sim: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' } },
  models: [{
    id: 'test/chat', name: 'Test chat', owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    deployments: [{ id: 'dep-chat', provider: 'sim', provider_model: 'chat', price: { prompt_per_million: '1', completion_per_million: '1' } }],
  }],
};

const SECRET = 'spend-guard-test-identity-secret-0123456789';
const SEEDS = [
  { id: 'acct_rich', wallet_usd: '10' },
  { id: 'acct_empty', wallet_usd: '0' },
  { id: 'acct_local', wallet_usd: '0.001' }, // 1,000 micros
  { id: 'acct_versions', wallet_usd: '0.000300' }, // 300 micros
  { id: 'acct_keys', wallet_usd: '10' },
];

const hash = (n: number) => n.toString(16).padStart(64, '0');
const identity = (accountId: string, keyHash = hash(1), limit: number | null = null): Identity => ({
  accountId, keyHash, isManagement: false, keyLimitMicros: limit, keyLimitReset: null,
});

describe('SpendGuard against the real billing service (embedded engines)', () => {
  let dir: string;
  let billingStore: Store;
  let busStore: Store;
  let bus: Bus;
  let billing: RunningService;
  /** Every RPC the guards under test make, by method path. */
  const calls: string[] = [];
  const clients: grpc.Client[] = [];
  const subs: Subscription[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-spend-guard-'));
    await writeFile(join(dir, 'catalog.json'), JSON.stringify(CATALOG));
    billingStore = createStore({ engine: 'embedded', dataDir: join(dir, 'billing') });
    busStore = createStore({ engine: 'embedded', dataDir: join(dir, 'bus') });
    bus = createBus({ engine: 'embedded', store: busStore, pollMs: 20 }, logger);
    billing = await startBillingService({
      config: billingConfigSchema.parse({
        BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: join(dir, 'catalog.json'), SEED_ACCOUNTS: JSON.stringify(SEEDS), GATEWAY_IDENTITY_SECRET: SECRET,
      }),
      store: billingStore, bus, logger,
    });
  });

  afterAll(async () => {
    for (const s of subs) await s.stop();
    for (const c of clients) c.close();
    await billing?.stop();
    await bus?.close();
    await billingStore?.close();
    await busStore?.close();
    await rm(dir, { recursive: true, force: true });
  });

  function billingClient(address = `127.0.0.1:${billing.grpcPort}`): BillingServiceClient {
    const counting: grpc.Interceptor = (options, nextCall) => {
      calls.push(options.method_definition.path);
      return new grpc.InterceptingCall(nextCall(options));
    };
    const client = new billingProto.gateway.billing.v1.BillingService(address, grpc.credentials.createInsecure(), { ...grpcClientOptions, interceptors: [counting, serviceIdentityInterceptor(new IdentitySigner(SECRET, 'inference'))] });
    clients.push(client);
    return client;
  }

  /** A guard wired as the inference service wires it: its own consumer group on the balance topic, from now on. */
  async function guard(): Promise<SpendGuard> {
    const g = new SpendGuard(billingClient(), logger, 600_000);
    subs.push(await bus.subscribe<BalanceChanged>({
      topics: [TOPICS.balance], group: `spend-guard-test-${randomUUID()}`, from: 'latest',
      handleBatch: async (messages) => { for (const m of messages) g.applyEvent(m.value); },
    }));
    return g;
  }

  /** What the chat path would publish for a call costing `micros` (prompt tokens at one micro each). */
  async function spend(accountId: string, keyHash: string, micros: number): Promise<void> {
    const event: Partial<UsageEvent> = {
      request_id: `br-${randomUUID()}`, account_id: accountId, key_hash: keyHash, model: 'test/chat', provider: 'sim',
      deployment: 'dep-chat', api_type: 'chat', status: 'succeeded', created_at_ms: Date.now(),
      usage: { prompt_tokens: micros, completion_tokens: 0, total_tokens: micros } as UsageEvent['usage'],
    };
    await bus.publish(TOPICS.usage, [{ key: accountId, value: event }]);
  }

  const outcome = (p: Promise<void>) => p.then(() => 'allowed', (err: GatewayError) => `${err.status} ${err.code}`);

  async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('asks billing on the first call of an account only; later calls answer from the cache', async () => {
    const g = await guard();
    const before = calls.length;
    await g.authorize(identity('acct_rich'), 't1');
    expect(calls.slice(before)).toEqual(['/gateway.billing.v1.BillingService/Preauthorize']);
    for (let i = 0; i < 5; i++) await g.authorize(identity('acct_rich'), 't2');
    expect(calls.length).toBe(before + 1);
  });

  it('the first call fails as unavailable (503) when billing cannot be asked', async () => {
    const dead = new SpendGuard(billingClient('127.0.0.1:1'), logger, 600_000);
    expect(await outcome(dead.authorize(identity('acct_rich'), 't'))).toBe('503 service_unavailable');
  });

  it('an empty account is refused with 402 insufficient_balance, and so is an unknown one', async () => {
    const g = await guard();
    expect(await outcome(g.authorize(identity('acct_empty'), 't'))).toBe('402 insufficient_balance');
    expect(await outcome(g.authorize(identity('acct_nobody'), 't'))).toBe('402 insufficient_balance');
  });

  it('a key over its limit is refused with 402 key_limit_exceeded, by billing and from the cache', async () => {
    const g = await guard();
    const key = hash(0xa1);
    const limited = identity('acct_keys', key, 500);
    expect(await outcome(g.authorize(limited, 't'))).toBe('allowed');

    await spend('acct_keys', key, 500);
    // The guard learns the key's spend from billing's BalanceChanged event, without asking.
    const asked = calls.length;
    await eventually('the balance event', async () => (await outcome(g.authorize(limited, 't'))) !== 'allowed');
    expect(await outcome(g.authorize(limited, 't'))).toBe('402 key_limit_exceeded');
    expect(calls.length).toBe(asked);

    // The account still has money: another key of it, and the same key with a higher limit, may spend.
    expect(await outcome(g.authorize(identity('acct_keys', hash(0xa2), 500), 't'))).toBe('allowed');
    expect(await outcome(g.authorize(identity('acct_keys', key, 501), 't'))).toBe('allowed');

    // A guard that never saw the account gets the same answer from billing itself.
    const fresh = await guard();
    expect(await outcome(fresh.authorize(limited, 't'))).toBe('402 key_limit_exceeded');
  });

  it('a newer BalanceChanged updates the cache; an older one is ignored', async () => {
    const g = await guard();
    const id = identity('acct_versions');
    expect(await outcome(g.authorize(id, 't'))).toBe('allowed'); // snapshot: 300 micros at version 0

    await spend('acct_versions', id.keyHash, 300); // billing posts it: 0 left, version 1
    await eventually('the balance event', async () => (await outcome(g.authorize(id, 't'))) !== 'allowed');
    expect(await outcome(g.authorize(id, 't'))).toBe('402 insufficient_balance');

    // A redelivered or reordered older event must not bring the spent money back.
    g.applyEvent({ account_id: 'acct_versions', spendable_micros: 300, price_factor_ppm: 1_000_000, version: 0, keys: [] });
    g.applyEvent({ account_id: 'acct_versions', spendable_micros: 300, price_factor_ppm: 1_000_000, version: 1, keys: [] });
    expect(await outcome(g.authorize(id, 't'))).toBe('402 insufficient_balance');

    // A newer one (a top-up) does.
    g.applyEvent({ account_id: 'acct_versions', spendable_micros: 5_000, price_factor_ppm: 1_000_000, version: 2, keys: [] });
    expect(await outcome(g.authorize(id, 't'))).toBe('allowed');
  });

  it('local charges subtract from the cached balance until the next event replaces it', async () => {
    const g = await guard();
    const id = identity('acct_local');
    const asked = calls.length;
    expect(await outcome(g.authorize(id, 't'))).toBe('allowed'); // 1,000 micros

    g.noteCharge('acct_local', id.keyHash, 600);
    expect(await outcome(g.authorize(id, 't'))).toBe('allowed'); // 400 left
    g.noteCharge('acct_local', id.keyHash, 400);
    expect(await outcome(g.authorize(id, 't'))).toBe('402 insufficient_balance'); // 0 left, known locally
    expect(calls.length).toBe(asked + 1); // none of that asked billing again

    // Billing has posted the first charge only: its event (400 left) replaces the local estimate.
    await spend('acct_local', id.keyHash, 600);
    await eventually('the first balance event', async () => (await outcome(g.authorize(id, 't'))) === 'allowed');
    // Then the second lands too.
    await spend('acct_local', id.keyHash, 400);
    await eventually('the second balance event', async () => (await outcome(g.authorize(id, 't'))) !== 'allowed');
    expect(await outcome(g.authorize(id, 't'))).toBe('402 insufficient_balance');
  });

  it('a local charge counts against the key limit too', async () => {
    const g = await guard();
    const key = hash(0xb1);
    const limited = identity('acct_rich', key, 1_000);
    expect(await outcome(g.authorize(limited, 't'))).toBe('allowed');
    g.noteCharge('acct_rich', key, 999);
    expect(await outcome(g.authorize(limited, 't'))).toBe('allowed');
    g.noteCharge('acct_rich', key, 1);
    expect(await outcome(g.authorize(limited, 't'))).toBe('402 key_limit_exceeded');
  });
});
