import type { Logger } from '@gw/platform';
import type { Collection } from '@gw/store';
import { LIST_PRICE_FACTOR_PPM, newAccountFields, type AccountDoc } from './accounts';
import { addSpend, periodLabels, type KeySpendDoc } from './key-spend';
import type { LedgerEntry } from './ledger';

/**
 * How many applied posting ids an account remembers. A posting is re-driven by the very next delivery of
 * its batch (usage events are keyed by account, so one account's events stay in order), long before 100
 * newer postings of the same account could push it out.
 */
export const RECENT_POSTINGS_KEPT = 100;
const MAX_ATTEMPTS = 50;

/** Key hashes become field names (`key_spend.<hash>`); anything else cannot be a path segment. */
const KEY_HASH_FIELD = /^[A-Za-z0-9_-]{1,128}$/;

export interface PostingResult {
  /** The account as it is after this call (whether or not this call wrote it). */
  account: AccountDoc;
  /** Posting ids whose balance change this call wrote. */
  applied: string[];
  /** Keys whose spend this call changed. */
  keys: string[];
}

/**
 * Lands the given postings (posting id -> its ledger entries, all of one account) on the account in ONE
 * guarded write: skips postings already in `recent_postings`, decrements the wallet by the rest, adds key
 * spend, records the posting ids and bumps the version. A concurrent writer makes the version guard miss;
 * then the account is read again and the decision remade, so each posting lands exactly once.
 */
export async function applyPostings(
  accounts: Collection<AccountDoc>,
  accountId: string,
  postings: ReadonlyMap<string, LedgerEntry[]>,
  logger: Logger,
  now: () => Date,
): Promise<PostingResult> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const account = await accounts.findOne({ _id: accountId });
    if (!account) {
      // Usage for an account billing never saw: record the debt on a fresh zero account rather than lose it.
      logger.error({ accountId }, 'usage for an unknown account; creating it with a zero balance');
      await accounts.updateOne(
        { _id: accountId },
        { $setOnInsert: newAccountFields({ walletMicros: 0, creditMicros: 0, priceFactorPpm: LIST_PRICE_FACTOR_PPM }, now().getTime()) },
        { upsert: true },
      );
      continue;
    }
    const landed = new Set(account.recent_postings ?? []);
    const toApply = [...postings].filter(([id]) => !landed.has(id));
    if (toApply.length === 0) return { account, applied: [], keys: [] };

    const entries = toApply.flatMap(([, e]) => e);
    const debit = entries.reduce((sum, e) => sum + e.charged_micros, 0);
    const keySpend = spendAfter(account.key_spend ?? {}, entries, logger);
    const recent = [...(account.recent_postings ?? []), ...toApply.map(([id]) => id)].slice(-RECENT_POSTINGS_KEPT);
    const $set: Record<string, unknown> = { version: account.version + 1, recent_postings: recent };
    for (const [key, spend] of keySpend) $set[`key_spend.${key}`] = spend;

    const res = await accounts.updateOne({ _id: accountId, version: account.version }, { $inc: { wallet_micros: -debit }, $set });
    if (res.matched === 1) {
      return {
        account: {
          ...account,
          wallet_micros: account.wallet_micros - debit,
          version: account.version + 1,
          recent_postings: recent,
          key_spend: { ...account.key_spend, ...Object.fromEntries(keySpend) },
        },
        applied: toApply.map(([id]) => id),
        keys: [...keySpend.keys()],
      };
    }
    logger.debug({ accountId, attempt }, 'account changed concurrently; retrying the posting');
  }
  throw new Error(`posting to account ${accountId} lost ${MAX_ATTEMPTS} concurrent updates in a row`);
}

/** Each entry's spend counts in the periods of the call's own time, so a batch spanning midnight splits right. */
function spendAfter(current: Record<string, KeySpendDoc>, entries: LedgerEntry[], logger: Logger): Map<string, KeySpendDoc> {
  const next = new Map<string, KeySpendDoc>();
  for (const e of entries) {
    if (!e.key_hash) continue;
    if (!KEY_HASH_FIELD.test(e.key_hash)) {
      logger.error({ requestId: e._id, keyHash: e.key_hash }, 'key hash is not a valid field name; key spend not tracked');
      continue;
    }
    const before = next.get(e.key_hash) ?? current[e.key_hash];
    next.set(e.key_hash, addSpend(before, e.charged_micros, periodLabels(new Date(e.created_at_ms))));
  }
  return next;
}
