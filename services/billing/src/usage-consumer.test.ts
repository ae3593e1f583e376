import type { Subscription } from '@gw/bus';
import { TOPICS, type BalanceChanged, type UsageEvent } from '@gw/proto';
import { accountsCollection, ensureSeedAccounts, type AccountDoc } from './accounts';
import { BillingService } from './billing-service';
import { ledgerCollection } from './ledger';
import { asBatch, Engines, eventually, silentLogger, STORE_ENGINES, usageEvent } from './test-harness';
import { createUsageBatchHandler } from './usage-consumer';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
// 100 prompt x 1 micro + 50 completion x 2 micros, at list price.
const LIST_MICROS = 200;

describe.each(STORE_ENGINES)('usage consumer (%s store, embedded bus)', (engine) => {
  let engines: Engines;
  let account: (id: string) => Promise<AccountDoc>;
  let published: BalanceChanged[];
  let balanceSub: Subscription;

  beforeEach(async () => {
    engines = await Engines.open(engine);
    await ensureSeedAccounts(accountsCollection(engines.store), [
      { id: 'acct_a', walletMicros: 0, creditMicros: 10_000_000, priceFactorPpm: 1_000_000 },
      { id: 'acct_ent', walletMicros: 5_000_000, creditMicros: 0, priceFactorPpm: 800_000 },
    ], silentLogger(), Date.now());
    account = async (id) => (await accountsCollection(engines.store).findOne({ _id: id }))!;
    published = [];
    balanceSub = await engines.bus.subscribe<BalanceChanged>({
      topics: [TOPICS.balance], group: `test-${Date.now()}`, handleBatch: async (ms) => { published.push(...ms.map((m) => m.value)); },
    });
  });

  afterEach(async () => {
    await balanceSub.stop();
    await engines.close();
  });

  const handler = () => createUsageBatchHandler({ store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger() });

  test('a usage event is billed exactly once, and its redelivery changes nothing', async () => {
    const event = usageEvent();
    const handle = handler();
    await handle(asBatch([event]));

    const after = await account('acct_a');
    expect(after.wallet_micros).toBe(-LIST_MICROS);
    expect(after.version).toBe(1);
    const entries = await ledgerCollection(engines.store).find({ account_id: 'acct_a' });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ _id: event.request_id, state: 'applied', list_micros: LIST_MICROS, charged_micros: LIST_MICROS, price_factor_ppm: 1_000_000 });

    await handle(asBatch([event]));
    await handler()(asBatch([event, event]));
    const again = await account('acct_a');
    expect(again.wallet_micros).toBe(-LIST_MICROS);
    expect(again.version).toBe(1);
    expect(await ledgerCollection(engines.store).count({})).toBe(1);
  });

  test('back-to-back batches: each lands once, marks do not pile up, and the ledger is read only by id', async () => {
    // A store whose ledger counts lookups that are not by id alone (a full scan on a Mongo-wire test server).
    let byOtherFields = 0;
    const counting = Object.create(engines.store) as typeof engines.store;
    counting.collection = ((name: string) => {
      const c = engines.store.collection(name);
      if (name !== 'ledger') return c;
      const find = c.find.bind(c);
      c.find = (filter, opts) => {
        if (Object.keys(filter).some((k) => k !== '_id')) byOtherFields++;
        return find(filter, opts);
      };
      return c;
    }) as typeof engines.store.collection;
    const handle = createUsageBatchHandler({ store: counting, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger() });
    for (let i = 0; i < 20; i++) await handle(asBatch([usageEvent(), usageEvent({ key_hash: KEY_B })]));

    const after = await account('acct_a');
    expect(after.wallet_micros).toBe(-40 * LIST_MICROS);
    expect(after.version).toBe(20);
    expect(Object.keys(after.landed_postings ?? {}).length).toBeLessThanOrEqual(1);
    expect(await ledgerCollection(engines.store).count({ state: 'applying' })).toBe(0);
    expect(byOtherFields).toBe(0);
  });

  test('two events for two keys of one account: one account write with the right key spends', async () => {
    const first = usageEvent({ key_hash: KEY_A });
    const second = usageEvent({ key_hash: KEY_B, usage: { prompt_tokens: 10, completion_tokens: 5 } as never });
    await handler()(asBatch([first, second]));

    const after = await account('acct_a');
    expect(after.version).toBe(1);
    expect(after.wallet_micros).toBe(-(LIST_MICROS + 20));
    expect(after.key_spend[KEY_A]).toMatchObject({ total_micros: LIST_MICROS, day: '2026-11-02', day_micros: LIST_MICROS, week: '2026-W45', month: '2026-11' });
    expect(after.key_spend[KEY_B]).toMatchObject({ total_micros: 20, day_micros: 20, week_micros: 20, month_micros: 20 });
    expect(Object.keys(after.landed_postings)).toHaveLength(1);
  });

  test('the enterprise factor 0.8 charges 80% of list, and both amounts are kept', async () => {
    const event = usageEvent({ account_id: 'acct_ent', deployment: 'dep-fee' });
    await handler()(asBatch([event]));
    const list = LIST_MICROS + 10_000;
    const entry = await ledgerCollection(engines.store).findOne({ _id: event.request_id });
    expect(entry).toMatchObject({ list_micros: list, charged_micros: list * 0.8, price_factor_ppm: 800_000 });
    expect((await account('acct_ent')).wallet_micros).toBe(5_000_000 - list * 0.8);
  });

  test('a line a provider batch ran (api_type batch) is charged at the batch price; the same usage as a chat call at list', async () => {
    const line = usageEvent({ account_id: 'acct_ent', deployment: 'dep-batch', api_type: 'batch' });
    const chat = usageEvent({ account_id: 'acct_ent', deployment: 'dep-batch', api_type: 'chat' });
    await handler()(asBatch([line, chat]));
    const ledger = ledgerCollection(engines.store);
    expect(await ledger.findOne({ _id: line.request_id })).toMatchObject({ api_type: 'batch', list_micros: LIST_MICROS / 2, charged_micros: LIST_MICROS / 2 * 0.8 });
    expect(await ledger.findOne({ _id: chat.request_id })).toMatchObject({ api_type: 'chat', list_micros: LIST_MICROS, charged_micros: LIST_MICROS * 0.8 });
  });

  test('key spend of an account with a price factor is the charged amount, not list', async () => {
    const event = usageEvent({ account_id: 'acct_ent', deployment: 'dep-fee', key_hash: KEY_A });
    await handler()(asBatch([event]));
    const charged = (LIST_MICROS + 10_000) * 0.8;
    const [usage] = await new BillingService(engines.store, () => new Date('2026-11-02T12:00:00Z')).keyUsage([KEY_A]);
    expect(usage).toEqual({ key_hash: KEY_A, total_micros: charged, daily_micros: charged, weekly_micros: charged, monthly_micros: charged });
  });

  test('an event for an unknown deployment is recorded unpriced at zero cost', async () => {
    const event = usageEvent({ deployment: 'gone' });
    await handler()(asBatch([event]));
    const entry = await ledgerCollection(engines.store).findOne({ _id: event.request_id });
    expect(entry).toMatchObject({ status: 'unpriced', call_status: 'succeeded', list_micros: 0, charged_micros: 0, state: 'applied' });
    expect((await account('acct_a')).wallet_micros).toBe(0);
  });

  test('int64 fields sent as strings (proto3 JSON) are read as numbers', async () => {
    const event = { ...usageEvent(), usage: { prompt_tokens: '100', completion_tokens: '50' }, latency_ms: '7' };
    await handler()(asBatch([event as never]));
    expect((await account('acct_a')).wallet_micros).toBe(-LIST_MICROS);
    expect(await ledgerCollection(engines.store).findOne({ _id: event.request_id })).toMatchObject({ latency_ms: 7 });
  });

  test('a malformed message is set aside without blocking the rest of the batch', async () => {
    const good = usageEvent();
    const batch = asBatch([good]);
    batch.unshift({ ...batch[0], value: { account_id: 'acct_a' }, offset: '99' });
    await handler()(batch);
    expect((await account('acct_a')).wallet_micros).toBe(-LIST_MICROS);
    expect(await engines.store.collection('usage_rejects').count({})).toBe(1);
  });

  // Before, the price function's RangeError failed the batch on every redelivery: billing stopped for everyone.
  test('an event whose charge is past any amount billing can hold is set aside without blocking the rest of the batch', async () => {
    const good = usageEvent();
    const absurd = usageEvent({ usage: { prompt_tokens: 9e15, completion_tokens: 9e15 } as UsageEvent['usage'] });
    await handler()(asBatch([absurd, good]));
    expect((await account('acct_a')).wallet_micros).toBe(-LIST_MICROS);
    expect(await engines.store.collection('usage_rejects').count({})).toBe(1);
  });

  test('usage for an account billing never saw is charged to a new zero account, not lost', async () => {
    await handler()(asBatch([usageEvent({ account_id: 'acct_new' })]));
    expect(await account('acct_new')).toMatchObject({ wallet_micros: -LIST_MICROS, credit_micros: 0, version: 1 });
  });

  test('publishes one BalanceChanged per account with spendable, factor, version and the touched keys', async () => {
    await handler()(asBatch([usageEvent({ key_hash: KEY_A }), usageEvent({ key_hash: KEY_B }), usageEvent({ account_id: 'acct_ent', key_hash: KEY_A })]));
    await eventually('two balance events', () => published.length >= 2);
    const forA = published.find((e) => e.account_id === 'acct_a')!;
    expect(forA).toMatchObject({ spendable_micros: 10_000_000 - 2 * LIST_MICROS, price_factor_ppm: 1_000_000, version: 1 });
    expect(forA.keys.map((k) => k.key_hash).sort()).toEqual([KEY_A, KEY_B]);
    expect(forA.keys.find((k) => k.key_hash === KEY_A)).toMatchObject({ total_micros: LIST_MICROS });
    expect(published.find((e) => e.account_id === 'acct_ent')).toMatchObject({ spendable_micros: 5_000_000 - 160, price_factor_ppm: 800_000, version: 1 });
    expect(published).toHaveLength(2);
  });
});
