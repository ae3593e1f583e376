import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Filter, Store } from '@gw/store';
import { BillingService } from './billing-service';
import { ledgerCollection, type LedgerEntry } from './ledger';
import { ledgerMediaCollection, moveMediaIdsToRows } from './ledger-media';
import { asBatch, Engines, patchedStore, silentLogger, STORE_ENGINES, usageEvent } from './test-harness';
import { createUsageBatchHandler } from './usage-consumer';

describe.each(STORE_ENGINES)('a call found by the media ids it produced (%s store)', (engine) => {
  let engines: Engines;

  beforeEach(async () => {
    engines = await Engines.open(engine);
  });
  afterEach(async () => {
    await engines.close();
  });

  const handler = (store: Store = engines.store) => createUsageBatchHandler({ store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger() });

  test('each media id finds its call for its own account only, and an unknown id is looked up by indexed keys alone', async () => {
    const image = usageEvent({ api_type: 'image', provider_response_id: 'req_img/upstream', media_ids: ['img_one', 'img_two'] });
    await handler()(asBatch([image, usageEvent()]));

    // Every ledger read the lookup makes, by its filter's fields.
    const reads: string[][] = [];
    const counting = patchedStore(engines.store, 'ledger', (c) => ({
      find: (filter: Filter, opts?: never) => { reads.push(Object.keys(filter)); return c.find(filter, opts); },
      findOne: (filter: Filter, opts?: never) => { reads.push(Object.keys(filter)); return c.findOne(filter, opts); },
    }));
    const billing = new BillingService(counting);
    for (const id of ['img_one', 'img_two']) expect((await billing.requestRecord('acct_a', id)).request_id).toBe(image.request_id);
    await expect(billing.requestRecord('acct_ent', 'img_one')).rejects.toMatchObject({ status: 404 });

    reads.length = 0;
    await expect(billing.requestRecord('acct_a', 'no-such-id')).rejects.toMatchObject({ status: 404 });
    // The request id, then the provider id: both indexed. No read on media_ids, which the embedded engine cannot index.
    expect(reads).toEqual([['_id', 'account_id', 'state'], ['provider_response_id', 'account_id', 'state']]);
  });

  test('a delivery that stopped between the ledger write and the media rows: the redelivery writes them', async () => {
    const image = usageEvent({ api_type: 'image', media_ids: ['img_late'] });
    const failing = patchedStore(engines.store, 'ledger_media', () => ({ insertMany: () => Promise.reject(new Error('store gone')) }));
    await expect(handler(failing)(asBatch([image]))).rejects.toThrow('store gone');
    expect(await ledgerCollection(engines.store).count({ _id: image.request_id })).toBe(1);

    await handler()(asBatch([image]));
    expect((await new BillingService(engines.store).requestRecord('acct_a', 'img_late')).request_id).toBe(image.request_id);
  });

  test('a ledger written before the media rows: its calls are found by media id after one upgrade, which a second start does not repeat', async () => {
    const ledger = ledgerCollection(engines.store);
    // As the older version wrote them: the ids in the entry, found through an index of media_ids.
    await ledger.ensureIndex({ fields: { media_ids: 1 } });
    const old = (id: string, mediaIds?: string[]) =>
      ({
        _id: id, account_id: 'acct_a', provider_response_id: `up-${id}`, api_type: 'image', usage: {}, created_at_ms: Date.now(),
        list_micros: 10, charged_micros: 10, price_factor_ppm: 1_000_000, state: 'applied', ...(mediaIds ? { media_ids: mediaIds } : {}),
      }) as unknown as LedgerEntry;
    await ledger.insertMany([old('req-old-1', ['img_a', 'img_b']), old('req-old-2'), old('req-old-3', ['vid_c'])]);

    await moveMediaIdsToRows(engines.store, ledger, silentLogger(), Date.now());
    const billing = new BillingService(engines.store);
    for (const [media, request] of [['img_a', 'req-old-1'], ['img_b', 'req-old-1'], ['vid_c', 'req-old-3']]) {
      expect((await billing.requestRecord('acct_a', media)).request_id).toBe(request);
    }
    expect(await ledgerMediaCollection(engines.store).count({})).toBe(3);
    if (engine === 'embedded') {
      const side = new DatabaseSync(join(engines.dir, 'store', 'store.sqlite'));
      try {
        const names = (side.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'doc:ledger'`).all() as { name: string }[]).map((r) => r.name);
        expect(names.filter((n) => n.includes('media'))).toEqual([]);
      } finally {
        side.close();
      }
    }

    // Once per store: an entry written the old way after the upgrade ran is not scanned for again.
    await ledger.insertOne(old('req-old-4', ['img_d']));
    await moveMediaIdsToRows(engines.store, ledger, silentLogger(), Date.now());
    await expect(billing.requestRecord('acct_a', 'img_d')).rejects.toMatchObject({ status: 404 });
  });
});
