import type { Logger } from '@gw/platform';
import type { Collection, Doc, Store } from '@gw/store';
import { isFieldName, type AccountDoc } from './accounts';
import type { LedgerEntry } from './ledger';
import { oncePerStore, pagesById } from './store-upgrades';

/**
 * Which account a key's spend is kept on, keyed by the key hash. An account keeps its keys' spend in a map
 * (`key_spend.<hash>`), and no engine indexes a map's keys: finding the account of a key asked `GetKeyUsage`
 * to read every account. The rows are written with every delivery's ledger entries, before its spend lands
 * (a key lookup when the row exists), so every key with spend has one.
 */
export interface KeyHolderDoc extends Doc {
  account_id: string;
}

export function keyHoldersCollection(store: Store): Collection<KeyHolderDoc> {
  return store.collection<KeyHolderDoc>('key_holders');
}

/** The rows of the entries' keys (those whose spend is tracked: a key hash that is a field name). */
export function keyHolderDocs(entries: readonly Pick<LedgerEntry, 'account_id' | 'key_hash'>[]): KeyHolderDoc[] {
  const rows = new Map<string, KeyHolderDoc>();
  for (const e of entries) if (e.key_hash && isFieldName(e.key_hash)) rows.set(e.key_hash, { _id: e.key_hash, account_id: e.account_id });
  return [...rows.values()];
}

const KEY_HOLDER_ROWS = 'key-holder-rows';

/**
 * Accounts written before 2026-12-02 have key spend without rows. Once per store, every key in an account's
 * `key_spend` gets its row. Safe to repeat (same keys), so a run cut short runs again at the next start.
 */
export async function writeKeyHolderRows(store: Store, accounts: Collection<AccountDoc>, logger: Logger, nowMs: number): Promise<void> {
  const holders = keyHoldersCollection(store);
  await oncePerStore(store, 'account_upgrades', KEY_HOLDER_ROWS, nowMs, async () => {
    let rows = 0;
    for await (const page of pagesById(accounts, {})) {
      const docs = keyHolderDocs(page.flatMap((a) => Object.keys(a.key_spend ?? {}).map((key_hash) => ({ account_id: a._id, key_hash }))));
      if (docs.length > 0) rows += (await holders.insertMany(docs, { ignoreDuplicates: true })).insertedIds.length;
    }
    if (rows > 0) logger.info({ rows }, 'accounts: the keys of earlier spend got their holder rows');
    return { rows_written: rows };
  });
}
