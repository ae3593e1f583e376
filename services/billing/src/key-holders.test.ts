import type { Filter, Store } from '@gw/store';
import { accountsCollection } from './accounts';
import { BillingService } from './billing-service';
import { keyHoldersCollection, writeKeyHolderRows } from './key-holders';
import { asBatch, Engines, patchedStore, silentLogger, STORE_ENGINES, usageEvent } from './test-harness';
import { createUsageBatchHandler } from './usage-consumer';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const NEVER_SPENT = 'cc'.repeat(32);

describe.each(STORE_ENGINES)('key usage found through the key holder rows (%s store)', (engine) => {
  let engines: Engines;

  beforeEach(async () => {
    engines = await Engines.open(engine);
  });
  afterEach(async () => {
    await engines.close();
  });

  const handler = (store: Store = engines.store) => createUsageBatchHandler({ store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger() });
  const totals = async (billing: BillingService, keys: string[], onlyAccount: string | null = null) =>
    (await billing.keyUsage(keys, onlyAccount)).map((u) => [u.key_hash, u.total_micros > 0]);

  test('reads only the accounts that hold the keys asked about, by id, and refuses keys of another account', async () => {
    await handler()(asBatch([usageEvent({ key_hash: KEY_A }), usageEvent({ key_hash: KEY_B, account_id: 'acct_ent' })]));

    // Every account read keyUsage makes, by its filter's fields.
    const reads: string[][] = [];
    const counting = patchedStore(engines.store, 'accounts', (c) => ({
      find: (filter: Filter, opts?: never) => { reads.push(Object.keys(filter)); return c.find(filter, opts); },
      findOne: (filter: Filter, opts?: never) => { reads.push(Object.keys(filter)); return c.findOne(filter, opts); },
    }));
    const billing = new BillingService(counting);
    expect(await totals(billing, [KEY_A, NEVER_SPENT, KEY_B])).toEqual([[KEY_A, true], [NEVER_SPENT, false], [KEY_B, true]]);
    expect(await totals(billing, [KEY_A], 'acct_a')).toEqual([[KEY_A, true]]);
    expect(reads).toEqual([['_id'], ['_id']]);

    reads.length = 0;
    expect(await totals(billing, [NEVER_SPENT], 'acct_a')).toEqual([[NEVER_SPENT, false]]);
    expect(reads).toEqual([]);
    await expect(billing.keyUsage([KEY_A, KEY_B], 'acct_a')).rejects.toMatchObject({ status: 401 });
  });

  test('a delivery that stopped before the holder rows: no spend landed, and the redelivery lands it once, found by key', async () => {
    const event = usageEvent({ key_hash: KEY_A });
    const failing = patchedStore(engines.store, 'key_holders', () => ({ insertMany: () => Promise.reject(new Error('store gone')) }));
    await expect(handler(failing)(asBatch([event]))).rejects.toThrow('store gone');
    expect((await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))?.key_spend?.[KEY_A]).toBeUndefined();

    await handler()(asBatch([event]));
    await handler()(asBatch([event]));
    const [usage] = await new BillingService(engines.store).keyUsage([KEY_A]);
    expect(usage.total_micros).toBe((await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))!.key_spend[KEY_A].total_micros);
    expect(usage.total_micros).toBeGreaterThan(0);
  });

  test('accounts with spend from before the rows: found by key after one upgrade, which a second start does not repeat', async () => {
    await handler()(asBatch([usageEvent({ key_hash: KEY_A }), usageEvent({ key_hash: KEY_B, account_id: 'acct_ent' })]));
    // As the older version left them: spend on the accounts, no rows.
    await keyHoldersCollection(engines.store).deleteMany({});
    const billing = new BillingService(engines.store);
    expect(await totals(billing, [KEY_A, KEY_B])).toEqual([[KEY_A, false], [KEY_B, false]]);

    await writeKeyHolderRows(engines.store, accountsCollection(engines.store), silentLogger(), Date.now());
    expect(await totals(billing, [KEY_A, KEY_B])).toEqual([[KEY_A, true], [KEY_B, true]]);
    expect(await keyHoldersCollection(engines.store).find({}, { sort: { _id: 1 } })).toEqual([
      { _id: KEY_A, account_id: 'acct_a' },
      { _id: KEY_B, account_id: 'acct_ent' },
    ]);

    // Once per store: spend written the old way after the upgrade ran is not scanned for again.
    const spend = (await accountsCollection(engines.store).findOne({ _id: 'acct_a' }))!.key_spend[KEY_A];
    await accountsCollection(engines.store).updateOne({ _id: 'acct_a' }, { $set: { [`key_spend.${NEVER_SPENT}`]: spend } });
    await writeKeyHolderRows(engines.store, accountsCollection(engines.store), silentLogger(), Date.now());
    expect(await totals(billing, [NEVER_SPENT])).toEqual([[NEVER_SPENT, false]]);
  });
});
