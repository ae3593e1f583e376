import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { modelSchema, type CatalogModel } from '@gw/catalog';
import { createBus, type Bus } from '@gw/bus';
import { createLogger, grpcClientOptions, IdentitySigner, INTERNAL_CALL_DEADLINE_MS, serviceIdentityInterceptor, type GatewayError, type Identity, type RunningService } from '@gw/platform';
import { billingProto, TOPICS, type BillingServiceClient, type UsageEvent } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { PriceBook, readCatalog } from '@gw/catalog';
import type { CallHold } from '@gw/billed-call';
import { SpendGuard, type CallBounds } from './spend-guard';
import { SpendGrants } from './spend-grants';
import { createFsBlobStore } from '@gw/blobs';

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
  { id: 'acct_bounds', wallet_usd: '10' },
  { id: 'acct_one_call', wallet_usd: '0.000150' }, // 150 micros: one call of at most 100
  { id: 'acct_release', wallet_usd: '10' },
  { id: 'acct_grants', wallet_usd: '10' },
  { id: 'acct_grant_settle', wallet_usd: '10' },
  { id: 'acct_grant_edge', wallet_usd: '0.000150' },
];
/** Billing's allowance in this suite: the most a burst may take past a limit. */
const ALLOWANCE_MICROS = 10;

const model = (over: Record<string, unknown> = {}): CatalogModel => modelSchema.parse({
  id: 'test/chat', name: 'Test chat', owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
  architecture: { input_modalities: ['text'], output_modalities: ['text'] }, deployments: CATALOG.models[0].deployments, ...over,
});
/** A call whose request serializes to 3 bytes (one prompt token) and may generate `maxOutputTokens`. */
const call = (maxOutputTokens: number | null, over: Partial<CallBounds> = {}): CallBounds => ({
  model: model(), deployments: ['dep-chat'], input: 'a', maxOutputTokens, choices: 1, ...over,
});

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
  const clients: grpc.Client[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-spend-guard-'));
    await writeFile(join(dir, 'catalog.json'), JSON.stringify(CATALOG));
    billingStore = createStore({ engine: 'embedded', dataDir: join(dir, 'billing') });
    busStore = createStore({ engine: 'embedded', dataDir: join(dir, 'bus') });
    bus = createBus({ engine: 'embedded', store: busStore, pollMs: 20 }, logger);
    billing = await startBillingService({
      config: billingConfigSchema.parse({
        BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: join(dir, 'catalog.json'), SEED_ACCOUNTS: JSON.stringify(SEEDS), GATEWAY_IDENTITY_SECRET: SECRET,
        SPEND_OVERDRAFT_ALLOWANCE_USD: String(ALLOWANCE_MICROS / 1_000_000),
      }),
      store: billingStore, bus, logger, blobs: createFsBlobStore(join(dir, 'billing-blobs')),
    });
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await billing?.stop();
    await bus?.close();
    await billingStore?.close();
    await busStore?.close();
    await rm(dir, { recursive: true, force: true });
  });

  function billingClient(address = `127.0.0.1:${billing.grpcPort}`): BillingServiceClient {
    const client = new billingProto.gateway.billing.v1.BillingService(address, grpc.credentials.createInsecure(),
      { ...grpcClientOptions, interceptors: [serviceIdentityInterceptor(new IdentitySigner(SECRET, 'inference'))] });
    clients.push(client);
    return client;
  }

  const guard = (address?: string) => new SpendGuard(billingClient(address), logger, 1_000);
  const requestId = () => `br-${randomUUID()}`;
  const held = async (accountId: string): Promise<number> =>
    ((await billingStore.collection<{ _id: string; held_micros: number }>('accounts').findOne({ _id: accountId }))?.held_micros) ?? 0;

  /** What the chat path publishes for a finished call costing `micros` (prompt tokens at one micro each). */
  async function report(requestIdOfCall: string, accountId: string, keyHash: string, micros: number, hold?: CallHold): Promise<void> {
    const event: Partial<UsageEvent> = {
      ...(hold?.grant ? { hold_id: hold.holdId, hold_micros: hold.micros } : {}),
      request_id: requestIdOfCall, account_id: accountId, key_hash: keyHash, model: 'test/chat', provider: 'sim',
      deployment: 'dep-chat', api_type: 'chat', status: 'succeeded', created_at_ms: Date.now(),
      usage: { prompt_tokens: micros, completion_tokens: 0, total_tokens: micros } as UsageEvent['usage'],
    };
    await bus.publish(TOPICS.usage, [{ key: accountId, value: event }]);
  }

  // The class is asserted, not the status: a typed error keeps its class across gRPC.
  const outcome = (p: Promise<unknown>) => p.then(() => 'allowed', (err: GatewayError) => `${err.constructor.name} ${err.code}`);

  async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('holds the output cap, else the model\'s completion limit, else its context length, else the default, plus the prompt', async () => {
    const g = guard();
    const id = identity('acct_bounds');
    const cases: [CallBounds, number][] = [
      [call(50), 51],
      [call(50, { choices: 3 }), 151],
      [call(null, { model: model({ per_request_limits: { completion_tokens: 70 }, context_length: 500 }) }), 71],
      [call(null, { model: model({ context_length: 500 }) }), 501],
      [call(null), 1_001],
    ];
    for (const [bounds, micros] of cases) {
      const before = await held('acct_bounds');
      await g.reserve(id, requestId(), bounds, 't');
      expect(await held('acct_bounds')).toBe(before + micros);
    }
  });

  it('asks billing on every call: an empty or unknown account is refused with 402, an unreachable billing is a 503', async () => {
    const g = guard();
    expect(await outcome(g.reserve(identity('acct_empty'), requestId(), call(1), 't'))).toBe('PaymentRequiredError insufficient_balance');
    expect(await outcome(g.reserve(identity('acct_nobody'), requestId(), call(1), 't'))).toBe('PaymentRequiredError insufficient_balance');
    expect(await outcome(guard('127.0.0.1:1').reserve(identity('acct_rich'), requestId(), call(1), 't'))).toBe('UnavailableError service_unavailable');
  });

  it('a key limit holds across instances: 50 reserves through two guards admit at most limit + allowance', async () => {
    const [a, b] = [guard(), guard()];
    const limited = identity('acct_rich', hash(0xa1), 500);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => outcome((i % 2 ? a : b).reserve(limited, requestId(), call(99), 't'))));
    // 100 micros each: 5 fit in 500; a sixth would leave 0 and exceed it by more than the allowance.
    expect(results.filter((r) => r === 'allowed')).toHaveLength(5);
    expect(new Set(results.filter((r) => r !== 'allowed'))).toEqual(new Set(['PaymentRequiredError key_limit_exceeded']));
  });

  it('a finished call stays held until billing has absorbed its usage: with no event, the next call is refused', async () => {
    const g = guard();
    const id = identity('acct_one_call');
    const first = requestId();
    await g.reserve(id, first, call(99), 't');
    // The call ended, its usage is stuck behind a bus outage: the hold still counts, for as long as it takes.
    await new Promise((r) => setTimeout(r, 200));
    expect(await outcome(g.reserve(id, requestId(), call(99), 't'))).toBe('PaymentRequiredError insufficient_balance');
    // Its usage lands (30 micros): the hold is settled to the real cost and 120 micros are spendable again.
    await report(first, 'acct_one_call', id.keyHash, 30);
    await eventually('the usage to settle the hold', async () => (await held('acct_one_call')) === 0);
    expect(await outcome(g.reserve(id, requestId(), call(99), 't'))).toBe('allowed');
  });

  it('a released hold (a call that failed) frees its amount; one not released waits for billing to settle it', async () => {
    const g = guard();
    const id = identity('acct_release');
    const failed = requestId();
    await g.reserve(id, failed, call(99), 't');
    g.release(id, failed, 't');
    await eventually('the release', async () => (await held('acct_release')) === 0);

    const served = requestId();
    await g.reserve(id, served, call(99), 't');
    await new Promise((r) => setTimeout(r, 200));
    expect(await held('acct_release')).toBe(100);
  });

  describe('spend grants: calls admitted locally against one hold per key', () => {
    const grantsOf: SpendGrants[] = [];
    const silentSockets: Socket[] = [];
    afterAll(async () => { await Promise.all(grantsOf.map((g) => g.close())); });
    const grants = (maxGrantMicros = 1_000_000) => {
      const g = new SpendGrants(guard(), PriceBook.fromCatalog(readCatalog(join(dir, 'catalog.json'))), { maxGrantMicros, callsPerGrant: 256, lifetimeMs: 60_000 }, logger);
      grantsOf.push(g);
      return g;
    };
    const holdsOf = async (accountId: string) =>
      (await billingStore.collection<{ _id: string; holds: Record<string, { micros: number; retired?: boolean }> }>('accounts').findOne({ _id: accountId }))?.holds ?? {};

    it('twenty calls hold once in billing, each priced like its own hold would be', async () => {
      const g = grants();
      const id = identity('acct_grants');
      const taken = await Promise.all(Array.from({ length: 20 }, () => g.admit(id, requestId(), call(99), 't')));
      expect(new Set(taken.map((h) => h.holdId)).size).toBe(1);
      expect(taken.every((h) => h.grant && h.micros === 100)).toBe(true);
      const holds = await holdsOf('acct_grants');
      expect(Object.keys(holds)).toEqual([taken[0].holdId]);
      // Sized for 256 such calls, held as one amount.
      expect(holds[taken[0].holdId].micros).toBe(25_600);
    });

    it('a key limit holds across instances: 50 calls through two instances admit at most limit + allowance', async () => {
      const [a, b] = [grants(), grants()];
      const limited = identity('acct_rich', hash(0xb2), 500);
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => outcome((i % 2 ? a : b).admit(limited, requestId(), call(99), 't'))));
      const admitted = results.filter((r) => r === 'allowed').length;
      // 100 micros each: a grant takes what is left (never the allowance), so at most 5 calls fit in 500.
      expect(admitted).toBeLessThanOrEqual(5);
      expect(admitted).toBeGreaterThanOrEqual(4);
      expect(new Set(results.filter((r) => r !== 'allowed'))).toEqual(new Set(['PaymentRequiredError key_limit_exceeded']));
    });

    it('near the balance a grant shrinks to the call: 150 micros admit one call of 100, as holds per call would', async () => {
      const g = grants();
      const id = identity('acct_grant_edge');
      expect(await outcome(g.admit(id, requestId(), call(99), 't'))).toBe('allowed');
      expect(await outcome(g.admit(id, requestId(), call(99), 't'))).toBe('PaymentRequiredError insufficient_balance');
    });

    it('while billing does not answer, the calls queued behind a key\'s grant renewal fail with its 503 together', async () => {
      // Accepts connections and never answers: a billing whose store is frozen, as far as its callers can tell.
      const silent = createServer((socket) => { silentSockets.push(socket); });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const g = new SpendGrants(guard(`127.0.0.1:${(silent.address() as AddressInfo).port}`), PriceBook.fromCatalog(readCatalog(join(dir, 'catalog.json'))),
          { maxGrantMicros: 1_000_000, callsPerGrant: 256, lifetimeMs: 60_000 }, logger);
        const startedAt = Date.now();
        const results = await Promise.all(Array.from({ length: 10 }, () => outcome(g.admit(identity('acct_rich', hash(0x51)), requestId(), call(99), 't'))));
        expect(new Set(results)).toEqual(new Set(['UnavailableError service_unavailable']));
        // One internal deadline (5 s) for all of them, not one per renewal round each call would start.
        expect(Date.now() - startedAt).toBeLessThan(INTERNAL_CALL_DEADLINE_MS * 2);
        await g.close();
      } finally {
        silentSockets.forEach((s) => s.destroy());
        await new Promise((resolve) => silent.close(resolve));
      }
    }, 30_000);

    it('usage settles each call\'s share; a failed call gives its share back; retiring leaves nothing held', async () => {
      const g = grants();
      const id = identity('acct_grant_settle');
      const calls = await Promise.all(Array.from({ length: 3 }, async () => {
        const rid = requestId();
        return { rid, hold: await g.admit(id, rid, call(99), 't') };
      }));
      const grantId = calls[0].hold.holdId;
      g.giveBack(id, calls[2].hold, 't');
      await report(calls[0].rid, 'acct_grant_settle', id.keyHash, 30, calls[0].hold);
      await eventually('the first share to settle', async () => (await holdsOf('acct_grant_settle'))[grantId]?.micros === 25_600 - 100);
      await g.close();
      // Retired: what no call used went back; the second call's share stays held until its usage lands.
      await eventually('the retirement', async () => (await held('acct_grant_settle')) === 100);
      expect((await holdsOf('acct_grant_settle'))[grantId]).toEqual(expect.objectContaining({ micros: 100, retired: true }));
      await report(calls[1].rid, 'acct_grant_settle', id.keyHash, 40, calls[1].hold);
      await eventually('the last share to drop the grant', async () => (await held('acct_grant_settle')) === 0 && !(grantId in await holdsOf('acct_grant_settle')));
    });
  });
});
