import { GatewayError } from '@gw/platform';
import { accountsCollection, ensureSeedAccounts, type AccountDoc } from './accounts';
import { ledgerCollection } from './ledger';
import { SpendHolds, type ReserveInput } from './spend-holds';
import { asBatch, Engines, silentLogger, STORE_ENGINES, usageEvent } from './test-harness';
import { createUsageBatchHandler } from './usage-consumer';

const KEY = 'aa'.repeat(32);
const ALLOWANCE = 100;
const TTL_MS = 60_000;
// Bounds of 100 prompt + 50 completion tokens: 200 micros at list on dep-chat (1 and 2 micros per token);
// dep-fee adds a 10,000 micro per-call fee. A usage event (usageEvent()) costs exactly that on dep-chat.
const BOUNDS = { promptTokens: 100, completionTokens: 50 };
const WORST_CHAT = 200;
let sequence = 0;
const requestId = () => `br-00000000-0000-4000-9000-${String(++sequence).padStart(12, '0')}`;

describe.each(STORE_ENGINES)('spend holds (%s store)', (engine) => {
  let engines: Engines;
  let holds: SpendHolds;
  let clock: number;

  beforeEach(async () => {
    engines = await Engines.open(engine);
    clock = Date.parse('2026-11-02T12:00:00Z');
    await ensureSeedAccounts(accountsCollection(engines.store), [
      { id: 'acct_a', walletMicros: 0, creditMicros: 1_000_000, priceFactorPpm: 1_000_000 },
      { id: 'acct_ent', walletMicros: 1_000_000, creditMicros: 0, priceFactorPpm: 500_000 },
      { id: 'acct_tiny', walletMicros: 1_000, creditMicros: 0, priceFactorPpm: 1_000_000 },
    ], silentLogger(), clock);
    holds = new SpendHolds(engines.store, engines.priceBook(), { allowanceMicros: ALLOWANCE, holdTtlMs: TTL_MS }, silentLogger(), () => new Date(clock));
  });
  afterEach(() => engines.close());

  const account = async (id = 'acct_a'): Promise<AccountDoc> => (await accountsCollection(engines.store).findOne({ _id: id }))!;
  const input = (over: Partial<ReserveInput> = {}): ReserveInput => ({
    accountId: 'acct_a', keyHash: KEY, keyLimitMicros: null, keyLimitReset: null, requestId: requestId(), deployments: ['dep-chat'], bounds: BOUNDS, ...over,
  });
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    return { status: (err as GatewayError).status, code: (err as GatewayError).code };
  };
  const settle = (events: ReturnType<typeof usageEvent>[]) =>
    createUsageBatchHandler({ store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger() })(asBatch(events));

  test('holds the worst case of the most expensive deployment the call may fall back to, at the account price factor', async () => {
    expect(await holds.reserve(input({ deployments: ['dep-chat', 'dep-fee'] }))).toEqual({ heldMicros: WORST_CHAT + 10_000, callMicros: WORST_CHAT + 10_000, priceFactorPpm: 1_000_000 });
    expect(await holds.reserve(input({ accountId: 'acct_ent', deployments: ['dep-fee'] }))).toEqual({ heldMicros: (WORST_CHAT + 10_000) / 2, callMicros: (WORST_CHAT + 10_000) / 2, priceFactorPpm: 500_000 });
    const a = await account();
    expect(a.held_micros).toBe(WORST_CHAT + 10_000);
    expect(a.key_held_micros[KEY]).toBe(WORST_CHAT + 10_000);
  });

  test('reserving is idempotent per request id (an async job re-run holds once)', async () => {
    const req = input();
    await holds.reserve(req);
    await holds.reserve(req);
    await Promise.all([holds.reserve(req), holds.reserve(req)]);
    expect((await account()).held_micros).toBe(WORST_CHAT);
  });

  test('a call whose usage is already billed holds nothing', async () => {
    const event = usageEvent();
    await settle([event]);
    expect(await holds.reserve(input({ requestId: event.request_id }))).toEqual(expect.objectContaining({ heldMicros: 0 }));
    expect((await account()).held_micros ?? 0).toBe(0);
  });

  test('a spend grant takes only what is left (never the allowance), and shrinks to the call near the limit', async () => {
    // acct_tiny: 1,000 micros. A grant asked for 100,000 gets 999; the next gets the call's worst case only
    // while the allowance admits it, and nothing after.
    expect(await holds.reserve(input({ accountId: 'acct_tiny', requestId: 'grant-a', grantMicros: 100_000 }))).toEqual({ heldMicros: 999, callMicros: WORST_CHAT, priceFactorPpm: 1_000_000 });
    expect(await refusal(holds.reserve(input({ accountId: 'acct_tiny', requestId: 'grant-b', grantMicros: 100_000 })))).toEqual({ status: 402, code: 'insufficient_balance' });
    await holds.retireGrant('acct_tiny', 'grant-a', 999 - 3 * WORST_CHAT);
    // 600 held by three calls: 399 left, so the grant is 399 (at least the call's 200).
    expect(await holds.reserve(input({ accountId: 'acct_tiny', requestId: 'grant-c', grantMicros: 100_000 }))).toEqual(expect.objectContaining({ heldMicros: 399 }));
    expect((await account('acct_tiny')).held_micros).toBe(999);
  });

  test('each call\'s posting settles its share of a grant; the last share of a retired grant drops it', async () => {
    await holds.reserve(input({ requestId: 'grant-s', grantMicros: 10_000 }));
    const [first, second] = [usageEvent({ hold_id: 'grant-s', hold_micros: WORST_CHAT }), usageEvent({ hold_id: 'grant-s', hold_micros: WORST_CHAT })];
    await settle([first]);
    expect((await account()).holds['grant-s']).toEqual(expect.objectContaining({ micros: 10_000 - WORST_CHAT }));
    expect((await account()).held_micros).toBe(10_000 - WORST_CHAT);
    // Retired with one call still out: only that call's share stays held.
    await holds.retireGrant('acct_a', 'grant-s', 10_000 - 2 * WORST_CHAT);
    expect((await account()).holds['grant-s']).toEqual(expect.objectContaining({ micros: WORST_CHAT, retired: true }));
    await settle([second, first]);
    const after = await account();
    expect(after.holds['grant-s']).toBeUndefined();
    expect(after.held_micros).toBe(0);
    expect(after.key_held_micros[KEY]).toBe(0);
    // Each call charged once: the redelivered first event changed nothing.
    expect(after.wallet_micros).toBe(-2 * WORST_CHAT);
  });

  test('402 key_limit_exceeded once the key limit minus spend and holds cannot take the worst case plus the allowance', async () => {
    const limit = { keyLimitMicros: 2 * WORST_CHAT + 50, keyLimitReset: 'daily' as const };
    await holds.reserve(input(limit));
    await holds.reserve(input(limit));
    // 50 micros remain: a 200 micro worst case exceeds them by more than the allowance of 100.
    expect(await refusal(holds.reserve(input(limit)))).toEqual({ status: 402, code: 'key_limit_exceeded' });
    // Another key of the account, and the same key with no limit, still spend.
    await holds.reserve(input({ keyHash: 'bb'.repeat(32), ...limit }));
    await holds.reserve(input());
  });

  test('402 insufficient_balance when spendable minus holds cannot take the worst case plus the allowance', async () => {
    await holds.reserve(input({ accountId: 'acct_tiny', bounds: { promptTokens: 400, completionTokens: 250 } }));
    expect(await refusal(holds.reserve(input({ accountId: 'acct_tiny', bounds: { promptTokens: 100, completionTokens: 150 } })))).toEqual({ status: 402, code: 'insufficient_balance' });
    expect(await refusal(holds.reserve(input({ accountId: 'acct_nobody' })))).toEqual({ status: 402, code: 'insufficient_balance' });
  });

  test('a call too large for what is left is told its worst case and what is left, not that nothing is left', async () => {
    // 100 prompt + 1,000 completion tokens on dep-chat: 100 + 2,000 micros.
    const big = { promptTokens: 100, completionTokens: 1_000 };
    const cap = 'cap its output (max_completion_tokens, max_tokens or max_output_tokens)';
    await expect(holds.reserve(input({ keyLimitMicros: 1_000, keyLimitReset: 'daily', bounds: big }))).rejects.toMatchObject({
      status: 402, code: 'key_limit_exceeded',
      message: `This call may cost up to 0.002100 USD (its prompt and up to 1000 output tokens), more than the 0.001000 USD left of this key's daily spending limit of 0.001000 USD; ${cap} or raise the limit`,
    });
    await expect(holds.reserve(input({ accountId: 'acct_tiny', bounds: big }))).rejects.toMatchObject({
      status: 402, code: 'insufficient_balance',
      message: `This call may cost up to 0.002100 USD (its prompt and up to 1000 output tokens), more than the 0.001000 USD the account has left to spend; ${cap} or add funds`,
    });
    // A media call's bounds are named as such, with no output cap to lower.
    await expect(holds.reserve(input({ accountId: 'acct_tiny', deployments: ['dep-fee'], bounds: { promptTokens: 0, completionTokens: 0, images: 2 } }))).rejects.toMatchObject({
      message: 'This call may cost up to 0.010000 USD (up to 2 images), more than the 0.001000 USD the account has left to spend; ask for less or add funds',
    });
    // Once nothing is left, the refusal says so.
    await holds.reserve(input({ accountId: 'acct_tiny', bounds: { promptTokens: 300, completionTokens: 400 } })); // 1,100: the balance plus the allowance
    await expect(holds.reserve(input({ accountId: 'acct_tiny' }))).rejects.toMatchObject({ code: 'insufficient_balance', message: 'Insufficient balance: add funds to continue' });
  });

  test('50 concurrent reserves against a tiny key limit hold at most the limit plus the allowance', async () => {
    const limit = { keyLimitMicros: 1_000, keyLimitReset: null };
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => holds.reserve(input(limit))));
    const admitted = results.filter((r) => r.status === 'fulfilled').length;
    expect(admitted).toBe(5);
    expect((await account()).key_held_micros[KEY]).toBe(5 * WORST_CHAT);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as GatewayError).code).toBe('key_limit_exceeded');
  });

  test('50 concurrent reserves against a tiny balance hold at most the balance plus the allowance', async () => {
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => holds.reserve(input({ accountId: 'acct_tiny' }))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect((await account('acct_tiny')).held_micros).toBe(5 * WORST_CHAT);
  });

  test('50 concurrent reserves on one well-funded account all succeed: reserves do not contend', async () => {
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => holds.reserve(input())));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect((await account()).held_micros).toBe(50 * WORST_CHAT);
  });

  test('usage settles the hold in the posting that charges it, once, and a redelivery releases nothing more', async () => {
    const held = input({ keyLimitMicros: 10_000, keyLimitReset: 'daily' });
    const other = input();
    await holds.reserve({ ...held, bounds: { promptTokens: 1_000, completionTokens: 1_000 } });
    await holds.reserve(other);
    const event = usageEvent({ request_id: held.requestId });
    await settle([event]);
    let a = await account();
    expect(a.wallet_micros).toBe(-WORST_CHAT);
    expect(a.holds[held.requestId]).toBeUndefined();
    expect(a.held_micros).toBe(WORST_CHAT);
    expect(a.key_held_micros[KEY]).toBe(WORST_CHAT);
    await settle([event]);
    a = await account();
    expect(a.held_micros).toBe(WORST_CHAT);
    expect(a.holds[other.requestId]).toBeDefined();
    expect(await holds.release('acct_a', held.requestId)).toBe(false);
  });

  test('settling usage and reserving race on one account without losing a hold or a charge', async () => {
    const settled = Array.from({ length: 20 }, () => input());
    await Promise.all(settled.map((r) => holds.reserve(r)));
    const fresh = Array.from({ length: 20 }, () => input());
    await Promise.all([
      ...settled.map((r) => settle([usageEvent({ request_id: r.requestId })])),
      ...fresh.map((r) => holds.reserve(r)),
    ]);
    const a = await account();
    expect(a.wallet_micros).toBe(-20 * WORST_CHAT);
    expect(a.held_micros).toBe(20 * WORST_CHAT);
    expect(Object.keys(a.holds).sort()).toEqual(fresh.map((r) => r.requestId).sort());
    expect(await ledgerCollection(engines.store).count({ state: 'applied' })).toBe(20);
  });

  test('release drops a hold once; concurrent releases free it once', async () => {
    const req = input();
    await holds.reserve(req);
    const released = await Promise.all([holds.release('acct_a', req.requestId), holds.release('acct_a', req.requestId)]);
    expect(released.filter(Boolean)).toHaveLength(1);
    const a = await account();
    expect(a.held_micros).toBe(0);
    expect(a.key_held_micros[KEY]).toBe(0);
  });

  test('the sweeper drops expired holds and keeps live ones', async () => {
    const old = input();
    await holds.reserve(old);
    clock += TTL_MS / 2;
    const young = input();
    await holds.reserve(young);
    clock += TTL_MS / 2;
    expect(await holds.sweepExpired()).toBe(1);
    const a = await account();
    expect(Object.keys(a.holds)).toEqual([young.requestId]);
    expect(a.held_micros).toBe(WORST_CHAT);
  });
});
