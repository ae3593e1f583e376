import type { Logger } from '@gw/platform';
import type { Collection, Store } from '@gw/store';
import type { LedgerEntry } from '../ledger';
import { oncePerStore, pagesById } from '../store-upgrades';
import type { ArchiveDoc } from './call-archive';

const UNBILLED_PROVIDER_IDS = 'unbilled-provider-ids';
/** The api types whose calls can be archived without being billed (failed videos, failed provider-batch lines). */
const UNBILLED_API_TYPES = ['video', 'batch'];

/**
 * Archives written before 2026-11-29 indexed every provider id; now a billed call's is found through the ledger
 * and only an unbilled call's is kept, in `unbilled_provider_id`. Once per store, before the old index goes, the
 * records of those older unbilled calls get that field, so their provider ids still find them. A record is
 * unbilled when the ledger has no entry of its request id. Idempotent: a run cut short is run again at the next
 * start; its mark is written last.
 */
export async function markOlderUnbilledRecords(store: Store, docs: Collection<ArchiveDoc>, ledger: Collection<LedgerEntry>, logger: Logger, nowMs: number): Promise<void> {
  await oncePerStore(store, 'archive_upgrades', UNBILLED_PROVIDER_IDS, nowMs, async () => {
    let marked = 0;
    const older = { api_type: { $in: UNBILLED_API_TYPES }, provider_response_id: { $gt: '' }, unbilled_provider_id: { $exists: false } };
    for await (const page of pagesById(docs, older)) {
      const billed = new Set((await ledger.find({ _id: { $in: page.map((d) => d._id) } })).map((e) => e._id));
      for (const doc of page) {
        if (billed.has(doc._id)) continue;
        await docs.updateOne({ _id: doc._id }, { $set: { unbilled_provider_id: doc.provider_response_id } });
        marked += 1;
      }
    }
    if (marked > 0) logger.info({ marked }, 'archive: older unbilled calls keep their provider ids in the sparse index');
    return { docs_marked: marked };
  });
}
