import { TOPICS } from '@gw/proto';
import { accountsCollection, ensureSeedAccounts } from './accounts';
import { ledgerCollection } from './ledger';
import { asBatch, Engines, eventually, silentLogger, STORE_ENGINES, usageEvent } from './test-harness';
import { createUsageBatchHandler, startUsageConsumer, type UsageBatchFaults } from './usage-consumer';

// 100 prompt x 1 micro + 50 completion x 2 micros.
const CHARGE = 200;
const START = 1_000_000;

class Crash extends Error {}

/** A fault that fires once, at the named point, as a process dying there would. */
function crashOnceAt(point: keyof UsageBatchFaults): UsageBatchFaults {
  let fired = false;
  return { [point]: () => { if (!fired) { fired = true; throw new Crash(`crash ${point}`); } } };
}

describe.each(STORE_ENGINES)('crash between the ledger insert and the balance change (%s store, embedded bus)', (engine) => {
  let engines: Engines;

  beforeEach(async () => {
    engines = await Engines.open(engine);
    await ensureSeedAccounts(accountsCollection(engines.store), [{ id: 'acct_a', walletMicros: START, creditMicros: 0, priceFactorPpm: 1_000_000 }], silentLogger(), Date.now());
  });
  afterEach(() => engines.close());

  const handler = (faults?: UsageBatchFaults) =>
    createUsageBatchHandler({ store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger(), faults });
  const wallet = async () => (await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))!.wallet_micros;
  const states = async () => (await ledgerCollection(engines.store).find({}, { sort: { _id: 1 } })).map((e) => e.state);

  test.each([
    ['after the ledger insert', 'afterLedgerInsert', 'applying', START],
    ['after the balance update', 'afterBalanceUpdate', 'applying', START - 2 * CHARGE],
  ] as const)('crash %s: the redelivered batch lands the pair exactly once', async (_name, point, stateAfterCrash, walletAfterCrash) => {
    const batch = asBatch([usageEvent(), usageEvent()]);
    // The handler keeps its fault across calls, as a restarted process would not: the fault fires only once.
    const handle = handler(crashOnceAt(point));
    await expect(handle(batch)).rejects.toBeInstanceOf(Crash);
    expect(await states()).toEqual([stateAfterCrash, stateAfterCrash]);
    expect(await wallet()).toBe(walletAfterCrash);

    await handle(batch);
    expect(await wallet()).toBe(START - 2 * CHARGE);
    expect(await states()).toEqual(['applied', 'applied']);

    await handler()(batch);
    expect(await wallet()).toBe(START - 2 * CHARGE);
    expect((await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))!.key_spend['aa'.repeat(32)].total_micros).toBe(2 * CHARGE);
  });

  test('a redelivery cut into different batches re-drives the whole earlier posting once', async () => {
    const [first, second, third] = [usageEvent(), usageEvent(), usageEvent()];
    await expect(handler(crashOnceAt('afterLedgerInsert'))(asBatch([first, second]))).rejects.toBeInstanceOf(Crash);

    // The bus hands the first event back with a new one: the earlier posting (both entries) lands with it.
    await handler()(asBatch([first, third]));
    expect(await wallet()).toBe(START - 3 * CHARGE);
    expect(await states()).toEqual(['applied', 'applied', 'applied']);
    expect((await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))!.version).toBe(1);

    await handler()(asBatch([second]));
    expect(await wallet()).toBe(START - 3 * CHARGE);
  });

  test('a posting re-driven after 120 newer postings of the same account landed is still applied once', async () => {
    const stranded = asBatch([usageEvent()]);
    await expect(handler(crashOnceAt('afterBalanceUpdate'))(stranded)).rejects.toBeInstanceOf(Crash);
    // A rebalance hands the rest of the partition to another consumer first: 120 postings land before the re-drive.
    for (let i = 0; i < 120; i++) await handler()(asBatch([usageEvent()]));
    expect(await wallet()).toBe(START - 121 * CHARGE);

    await handler()(stranded);
    expect(await wallet()).toBe(START - 121 * CHARGE);
    expect(await states()).toEqual(Array(121).fill('applied'));
    // Marks of finished postings do not pile up: the next posting drops them.
    await handler()(asBatch([usageEvent()]));
    expect(Object.keys((await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))!.landed_postings)).toHaveLength(1);
  }, 60_000);

  test('an account written before landed_postings: a posting its recent_postings list landed is not applied again', async () => {
    // The earlier version crashed after the balance write of this posting; its mark lives in recent_postings.
    const stranded = asBatch([usageEvent()]);
    await expect(handler(crashOnceAt('afterBalanceUpdate'))(stranded)).rejects.toBeInstanceOf(Crash);
    const accounts = accountsCollection(engines.store);
    const marks = Object.keys((await accounts.findOne({ _id: 'acct_a' }))!.landed_postings);
    await accounts.updateOne({ _id: 'acct_a' }, { $unset: { landed_postings: true }, $set: { recent_postings: ['posting-older', ...marks] } });

    await handler()(stranded);
    expect(await wallet()).toBe(START - CHARGE);
    expect(await states()).toEqual(['applied']);
    // The next posting retires the old field, and its marks with it.
    await handler()(asBatch([usageEvent()]));
    const after = (await accounts.findOne({ _id: 'acct_a' }))!;
    expect(after.recent_postings).toBeUndefined();
    expect(after.wallet_micros).toBe(START - 2 * CHARGE);
  });

  test('two consumers racing on the same batch charge it once', async () => {
    const batch = asBatch([usageEvent(), usageEvent(), usageEvent()]);
    await Promise.all([handler()(batch), handler()(batch), handler()(batch)]);
    expect(await wallet()).toBe(START - 3 * CHARGE);
    expect(await states()).toEqual(['applied', 'applied', 'applied']);
  });

  test('through the bus: a consumer that dies mid-batch gets the batch again and charges once', async () => {
    const consumer = await startUsageConsumer({
      store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger(),
      maxBatch: 50, fetchWaitMs: 0, faults: crashOnceAt('afterBalanceUpdate'),
    });
    try {
      const events = [usageEvent(), usageEvent(), usageEvent()];
      await engines.bus.publish(TOPICS.usage, events.map((value) => ({ key: value.account_id, value })));
      await eventually('all entries applied', async () => (await states()).every((s) => s === 'applied') && (await states()).length === 3);
      expect(await wallet()).toBe(START - 3 * CHARGE);
    } finally {
      await consumer.stop();
    }
  });
});
