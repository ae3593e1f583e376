import type { Logger } from '@gw/platform';
import type { Collection, Doc, Store } from '@gw/store';
import type { LedgerEntry } from './ledger';
import { oncePerStore, pagesById } from './store-upgrades';

/**
 * One row per media id (an image record id of the gateway's) that a billed call produced, keyed by account and
 * media id, so the billing lookup by a media id is a key read on every engine. The ledger's `media_ids` array
 * cannot be indexed element by element on the embedded engine: a lookup by media id read the whole ledger
 * there, and so did every lookup of an unknown id, which tries media ids last.
 */
export interface LedgerMediaDoc extends Doc {
  account_id: string;
  request_id: string;
}

export function ledgerMediaCollection(store: Store): Collection<LedgerMediaDoc> {
  return store.collection<LedgerMediaDoc>('ledger_media');
}

// The account in the key: another account's media id can neither be found nor take the key.
const mediaKey = (accountId: string, mediaId: string) => `${accountId}/${mediaId}`;

/** The rows of the entries' media ids (none for most calls). */
export function ledgerMediaDocs(entries: readonly LedgerEntry[]): LedgerMediaDoc[] {
  return entries.flatMap((e) => (e.media_ids ?? []).map((mediaId) => ({ _id: mediaKey(e.account_id, mediaId), account_id: e.account_id, request_id: e._id })));
}

/** The request id of the account's call that produced the media id, if any. */
export async function requestIdOfMedia(media: Collection<LedgerMediaDoc>, accountId: string, mediaId: string): Promise<string | null> {
  return (await media.findOne({ _id: mediaKey(accountId, mediaId), account_id: accountId }))?.request_id ?? null;
}

const MEDIA_ROWS = 'media-rows';

/**
 * Ledgers written before 2026-12-02 found media ids through an index of `media_ids`. Once per store, the
 * entries that have media ids get their rows, then the old index goes. Safe to repeat (same keys), so a run cut
 * short runs again at the next start.
 */
export async function moveMediaIdsToRows(store: Store, ledger: Collection<LedgerEntry>, logger: Logger, nowMs: number): Promise<void> {
  const media = ledgerMediaCollection(store);
  await oncePerStore(store, 'ledger_upgrades', MEDIA_ROWS, nowMs, async () => {
    let rows = 0;
    for await (const page of pagesById(ledger, { media_ids: { $exists: true } })) {
      const docs = ledgerMediaDocs(page);
      if (docs.length > 0) rows += (await media.insertMany(docs, { ignoreDuplicates: true })).insertedIds.length;
    }
    if (rows > 0) logger.info({ rows }, 'ledger: media ids of earlier calls moved to their own rows');
    return { rows_written: rows };
  });
  await ledger.dropIndex({ fields: { media_ids: 1 } });
}
