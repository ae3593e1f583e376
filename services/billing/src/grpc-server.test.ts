import * as grpc from '@grpc/grpc-js';
import { callUnary, GatewayError, grpcClientOptions, PaymentRequiredError, IdentitySigner, serviceIdentityInterceptor, type RunningService } from '@gw/platform';
import {
  billingProto, healthProto, type Balance__Output, type BillingServiceClient, type KeyUsage__Output, type PreauthorizeRequest, type PreauthorizeResult,
  type ReleaseRequest, type ReleaseResult, type ReserveRequest, type ReserveResult,
} from '@gw/proto';
import { accountsCollection } from './accounts';
import { ledgerCollection } from './ledger';
import { asBatch, BILLING_TEST_SECRET, Engines, silentLogger, STORE_ENGINES, usageEvent } from './test-harness';
import { createUsageBatchHandler } from './usage-consumer';

const KEY = 'aa'.repeat(32);
const OTHER_KEY = 'cc'.repeat(32);
// One event: 100 prompt x 1 micro + 50 completion x 2 micros, made on Monday 2026-11-02.
const CHARGE = 200;

describe.each(STORE_ENGINES)('billing gRPC (%s store, embedded bus)', (engine) => {
  let engines: Engines;
  let service: RunningService;
  let client: BillingServiceClient;
  let clock = new Date('2026-11-02T12:00:00Z');

  beforeAll(async () => {
    engines = await Engines.open(engine);
    service = await engines.startService({
      seeds: [
        { id: 'acct_a', wallet_usd: '0', credit_usd: '1' },
        { id: 'acct_broke', wallet_usd: '0', credit_usd: '0' },
        { id: 'acct_ent', wallet_usd: '50', price_factor: '0.8' },
      ],
      now: () => clock,
    });
    client = billingClient(serviceIdentityInterceptor(new IdentitySigner(BILLING_TEST_SECRET, 'inference')));
    const handle = createUsageBatchHandler({ store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger() });
    await handle(asBatch([usageEvent({ key_hash: KEY })]));
  });

  const billingClient = (...interceptors: grpc.Interceptor[]) => new billingProto.gateway.billing.v1.BillingService(`127.0.0.1:${service.grpcPort}`,
    grpc.credentials.createInsecure(), { ...grpcClientOptions, interceptors }) as BillingServiceClient;

  afterAll(async () => {
    client.close();
    await service.stop();
    await engines.close();
  });

  const preauthorize = (req: PreauthorizeRequest) => callUnary<PreauthorizeRequest, PreauthorizeResult>(client, client.Preauthorize, req);
  const refusal = async (req: PreauthorizeRequest) => {
    const err = await preauthorize(req).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(PaymentRequiredError);
    return { status: (err as GatewayError).status, code: (err as GatewayError).code };
  };

  test.each<[string, grpc.Interceptor[]]>([
    ['no credentials', []],
    ['a token signed with another secret', [serviceIdentityInterceptor(new IdentitySigner('not-the-platform-secret-0123456789abcdef', 'inference'))]],
    ['a genuine token minted for another method', [(options, next) => new grpc.InterceptingCall(next(options), {
      start: (md, listener, go) => {
        md.set('x-gw-identity', new IdentitySigner(BILLING_TEST_SECRET, 'inference').mint({ method: 'GRPC', path: '/gateway.keys.v1.KeysService/Authenticate' }, null, 't'));
        go(md, listener);
      },
    })]],
  ])('%s: every RPC is refused and reads nothing', async (_what, interceptors) => {
    const anonymous = billingClient(...interceptors);
    try {
      for (const call of [
        callUnary(anonymous, anonymous.Preauthorize, { account_id: 'acct_ent', key_hash: KEY }),
        callUnary(anonymous, anonymous.GetBalance, { account_id: 'acct_ent' }),
        callUnary(anonymous, anonymous.GetKeyUsage, { key_hashes: [KEY] }),
      ]) {
        const err = await call.then(() => null, (e: unknown) => e as GatewayError);
        expect(err?.status).toBe(401);
      }
    } finally {
      anonymous.close();
    }
  });

  test('an account with spendable balance and a key under its limit is authorized', async () => {
    const res = await preauthorize({ account_id: 'acct_a', key_hash: KEY, has_key_limit: true, key_limit_micros: CHARGE + 1, key_limit_reset: 'daily' });
    expect(res.balance).toMatchObject({ account_id: 'acct_a', wallet_micros: -CHARGE, credit_micros: 1_000_000, spendable_micros: 1_000_000 - CHARGE, price_factor_ppm: 1_000_000, version: 1 });
    expect(res.key_period_usage_micros).toBe(CHARGE);
  });

  test('no spendable balance -> 402 insufficient_balance', async () => {
    expect(await refusal({ account_id: 'acct_broke', key_hash: KEY })).toEqual({ status: 402, code: 'insufficient_balance' });
  });

  test('unknown account -> 402', async () => {
    expect(await refusal({ account_id: 'acct_nobody', key_hash: KEY })).toEqual({ status: 402, code: 'insufficient_balance' });
  });

  test('key limit reached in the period -> 402 key_limit_exceeded; a new period resets it', async () => {
    const limited = (reset: string) => ({ account_id: 'acct_a', key_hash: KEY, has_key_limit: true, key_limit_micros: CHARGE, key_limit_reset: reset });
    expect(await refusal(limited('daily'))).toEqual({ status: 402, code: 'key_limit_exceeded' });
    expect(await refusal(limited('weekly'))).toEqual({ status: 402, code: 'key_limit_exceeded' });
    expect(await refusal(limited(''))).toEqual({ status: 402, code: 'key_limit_exceeded' });

    clock = new Date('2026-11-03T00:00:01Z'); // Tuesday: a new day, same ISO week and month
    try {
      expect((await preauthorize(limited('daily'))).key_period_usage_micros).toBe(0);
      expect(await refusal(limited('weekly'))).toEqual({ status: 402, code: 'key_limit_exceeded' });
      expect(await refusal(limited('monthly'))).toEqual({ status: 402, code: 'key_limit_exceeded' });
      expect(await refusal(limited(''))).toEqual({ status: 402, code: 'key_limit_exceeded' });
      clock = new Date('2026-12-01T00:00:00Z');
      expect((await preauthorize(limited('monthly'))).key_period_usage_micros).toBe(0);
    } finally {
      clock = new Date('2026-11-02T12:00:00Z');
    }
  });

  test('another key of the account is not held to this key\'s spend', async () => {
    const res = await preauthorize({ account_id: 'acct_a', key_hash: OTHER_KEY, has_key_limit: true, key_limit_micros: 1, key_limit_reset: 'daily' });
    expect(res.key_period_usage_micros).toBe(0);
  });

  test('a bad key_limit_reset is 400 with the param named', async () => {
    const err = await preauthorize({ account_id: 'acct_a', key_hash: KEY, key_limit_reset: 'hourly' }).catch((e: GatewayError) => e);
    expect(err).toMatchObject({ status: 400, param: 'key_limit_reset' });
  });

  test('Reserve holds the worst case at the account factor, once per request id; Release frees it once', async () => {
    const reserve = (req: Partial<ReserveRequest>) => callUnary<ReserveRequest, ReserveResult>(client, client.Reserve, {
      account_id: 'acct_ent', key_hash: OTHER_KEY, request_id: 'br-00000000-0000-4000-8000-00000000abcd', deployments: ['dep-chat', 'dep-fee'], prompt_tokens: 100, max_output_tokens: 50, ...req,
    });
    const release = () => callUnary<ReleaseRequest, ReleaseResult>(client, client.Release, { account_id: 'acct_ent', request_id: 'br-00000000-0000-4000-8000-00000000abcd' });
    // dep-fee is the dearer: 200 micros of tokens + a 10,000 micro fee, at the 0.8 factor.
    expect(await reserve({})).toEqual({ held_micros: 8_160, call_micros: 8_160, price_factor_ppm: 800_000 });
    expect(await reserve({})).toEqual({ held_micros: 8_160, call_micros: 8_160, price_factor_ppm: 800_000 });
    expect(await release()).toEqual({ released: true });
    expect(await release()).toEqual({ released: false });
    expect((await accountsCollection(engines.store).findOne({ _id: 'acct_ent' }))!.held_micros).toBe(0);
  });

  test.each([
    ['request_id', { request_id: 'br.1' }],
    ['max_output_tokens', { max_output_tokens: -1 }],
    ['key_limit_reset', { key_limit_reset: 'hourly' }],
    ['account_id', { account_id: '' }],
  ])('Reserve with a bad %s is 400 naming it', async (param, req) => {
    const err = await callUnary<ReserveRequest, ReserveResult>(client, client.Reserve, {
      account_id: 'acct_a', key_hash: KEY, request_id: 'br-00000000-0000-4000-8000-00000000abce', deployments: ['dep-chat'], prompt_tokens: 1, max_output_tokens: 1, ...req,
    }).catch((e: GatewayError) => e);
    expect(err).toMatchObject({ status: 400, param });
  });

  test('GetBalance reports the seeded factor; unknown account is 404', async () => {
    const res = await callUnary<{ account_id: string }, Balance__Output>(client, client.GetBalance, { account_id: 'acct_ent' });
    expect(res).toMatchObject({ wallet_micros: 50_000_000, spendable_micros: 50_000_000, price_factor_ppm: 800_000, version: 0 });
    const err = await callUnary(client, client.GetBalance, { account_id: 'acct_nobody' }).catch((e: GatewayError) => e);
    expect(err).toMatchObject({ status: 404 });
  });

  test('GetKeyUsage reports spend per key, zeros for a key that never spent', async () => {
    const res = await callUnary<{ key_hashes: string[] }, { usage: KeyUsage__Output[] }>(client, client.GetKeyUsage, { key_hashes: [KEY, OTHER_KEY] });
    expect(res.usage).toEqual([
      { key_hash: KEY, total_micros: CHARGE, daily_micros: CHARGE, weekly_micros: CHARGE, monthly_micros: CHARGE },
      { key_hash: OTHER_KEY, total_micros: 0, daily_micros: 0, weekly_micros: 0, monthly_micros: 0 },
    ]);
  });

  test('gRPC health answers from the readiness checks', async () => {
    const health = new healthProto.grpc.health.v1.Health(`127.0.0.1:${service.grpcPort}`, grpc.credentials.createInsecure());
    try {
      const res = await callUnary<{ service: string }, { status: string }>(health, health.Check, { service: '' });
      expect(res.status).toBe('SERVING');
    } finally {
      health.close();
    }
  });

  test('seeding again never overwrites an existing balance', async () => {
    const again = await engines.startService({ seeds: [{ id: 'acct_a', wallet_usd: '999' }] });
    await again.stop();
    expect((await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))!.wallet_micros).toBe(-CHARGE);
    expect(await ledgerCollection(engines.store).count({})).toBe(1);
  });

  test('GetRequestCharges lists the billed calls of the account among the ids asked, at its factor; others are left out', async () => {
    const handle = createUsageBatchHandler({ store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger() });
    const [a, b, foreign] = [usageEvent({ account_id: 'acct_ent' }), usageEvent({ account_id: 'acct_ent' }), usageEvent({ account_id: 'acct_a' })];
    await handle(asBatch([a, b, foreign]));
    const lookup = (account_id: string, request_ids: string[]) => callUnary<{ account_id: string; request_ids: string[] }, { charges: object[] }>(
      client, client.GetRequestCharges, { account_id, request_ids });
    const res = await lookup('acct_ent', [a.request_id, b.request_id, foreign.request_id, 'br-00000000-0000-4000-8000-0000000fffff']);
    expect(res.charges.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))).toEqual([
      { request_id: a.request_id, list_micros: CHARGE, charged_micros: 160 },
      { request_id: b.request_id, list_micros: CHARGE, charged_micros: 160 },
    ]);
    const tooMany = await lookup('acct_ent', Array.from({ length: 1_001 }, (_, i) => `br-${i}`)).catch((e: GatewayError) => e);
    expect(tooMany).toMatchObject({ status: 400, param: 'request_ids' });
  });
});
