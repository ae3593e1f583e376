import type { Logger } from '@gw/platform';
import type { Collection } from '@gw/store';
import { isFieldName, LIST_PRICE_FACTOR_PPM, newAccountFields, type AccountDoc } from './accounts';
import { addSpend, periodLabels, type KeySpendDoc } from './key-spend';
import type { FinishedPostings } from './finished-postings';
import type { LedgerEntry } from './ledger';

const MAX_ATTEMPTS = 50;

export interface PostingResult {
  /** The account as it is after this call (whether or not this call wrote it). */
  account: AccountDoc;
  /** Posting ids whose balance change this call wrote. */
  applied: string[];
  /** Keys whose spend this call changed. */
  keys: string[];
}

export interface PostingInput {
  accounts: Collection<AccountDoc>;
  ledger: Collection<LedgerEntry>;
  accountId: string;
  postingIds: readonly string[];
  /** The ids of the postings' entries on this account that were `applying` when the delivery read them. */
  entryIds: readonly string[];
  /** Postings whose entries this process saw marked applied: they have none `applying`, so need no lookup. */
  finishedPostings: FinishedPostings;
  logger: Logger;
  now: () => Date;
}

/**
 * The entries still `applying` of the postings and of the account's marked postings, read after the account.
 * The postings' entries are known by id (a posting's entries are fixed once recorded, and can only become
 * `applied`); a marked posting this process has not seen finish is looked up by posting.
 */
async function openEntries(input: PostingInput, marked: readonly string[]): Promise<LedgerEntry[]> {
  const { ledger, accountId, postingIds, entryIds, finishedPostings } = input;
  const postings = new Set(postingIds);
  const unknown = marked.filter((id) => !postings.has(id) && !finishedPostings.has(id));
  const [known, others] = await Promise.all([
    entryIds.length > 0 ? ledger.find({ _id: { $in: [...entryIds] } }) : [],
    unknown.length > 0 ? ledger.find({ account_id: accountId, posting_id: { $in: unknown }, state: 'applying' }) : [],
  ]);
  const open = known.filter((e) => e.account_id === accountId && e.state === 'applying' && postings.has(e.posting_id));
  return [...open, ...others];
}

/**
 * Lands the given postings (ids of deliveries that recorded ledger entries) on one account in ONE guarded
 * write: decrements the wallet by their entries still `applying`, adds key spend, settles the calls' spend
 * holds, and marks the postings in `landed_postings`. Exactly once rests on state, not on a memory window:
 * a posting lands only when it is not marked and has entries `applying`; its mark is dropped (by a later
 * posting's write) only once none of its entries is `applying` any more (`finishedPostings` only skips the
 * lookup of postings whose entries this process itself marked applied). The account is read before the
 * ledger and the write is version-guarded, so a decision made on a stale read never lands.
 */
export async function applyPostings(input: PostingInput): Promise<PostingResult> {
  const { accounts, ledger, accountId, postingIds, entryIds, finishedPostings, logger, now } = input;
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
    // Accounts written before `landed_postings` list their landed posting ids in `recent_postings`: those landed
    // too. Still-open ones move to `landed_postings` and the old field goes, in this same guarded write.
    const legacy = account.recent_postings ?? [];
    const marked = [...new Set([...Object.keys(account.landed_postings ?? {}), ...legacy])];
    const open = await openEntries(input, marked);
    const withOpenEntries = new Set(open.map((e) => e.posting_id));
    const toApply = postingIds.filter((id) => !marked.includes(id) && withOpenEntries.has(id));
    const finished = marked.filter((id) => !withOpenEntries.has(id));
    if (toApply.length === 0 && finished.length === 0 && legacy.length === 0) return { account, applied: [], keys: [] };

    const entries = open.filter((e) => toApply.includes(e.posting_id));
    const debit = entries.reduce((sum, e) => sum + e.charged_micros, 0);
    const keySpend = spendAfter(account.key_spend ?? {}, entries, logger);
    const filter: Record<string, unknown> = { _id: accountId, version: account.version };
    const $set: Record<string, unknown> = { version: account.version + 1 };
    const $unset: Record<string, true> = {};
    const $inc: Record<string, number> = { wallet_micros: -debit };
    for (const id of toApply) $set[`landed_postings.${id}`] = true;
    for (const id of finished) $unset[`landed_postings.${id}`] = true;
    if (legacy.length > 0) {
      for (const id of legacy) if (withOpenEntries.has(id)) $set[`landed_postings.${id}`] = true;
      $unset.recent_postings = true;
    }
    for (const [key, spend] of keySpend) $set[`key_spend.${key}`] = spend;
    settleHolds(account, entries, filter, $inc, $set, $unset);

    const res = await accounts.updateOne(filter, Object.keys($unset).length > 0 ? { $inc, $set, $unset } : { $inc, $set });
    if (res.matched === 1) {
      // The fields balance events carry, as this write left them.
      const after = { ...account, wallet_micros: account.wallet_micros - debit, version: account.version + 1, key_spend: { ...account.key_spend, ...Object.fromEntries(keySpend) } };
      return { account: after, applied: toApply, keys: [...keySpend.keys()] };
    }
    logger.debug({ accountId, attempt }, 'account changed concurrently; retrying the posting');
  }
  throw new Error(`posting to account ${accountId} lost ${MAX_ATTEMPTS} concurrent updates in a row`);
}

/**
 * Each call's hold is settled in the write that charges it: a hold of its own is dropped; its share of a
 * spend grant comes off the grant, and a retired grant whose calls have all landed is dropped. Holds change
 * without the version, so the write also requires each hold it touches to be as read.
 */
function settleHolds(account: AccountDoc, entries: LedgerEntry[], filter: Record<string, unknown>,
  $inc: Record<string, number>, $set: Record<string, unknown>, $unset: Record<string, true>): void {
  const release = (holdId: string, micros: number, keyHash: string) => {
    $inc.held_micros = ($inc.held_micros ?? 0) - micros;
    if (keyHash) $inc[`key_held_micros.${keyHash}`] = ($inc[`key_held_micros.${keyHash}`] ?? 0) - micros;
    filter[`holds.${holdId}.micros`] = account.holds[holdId].micros;
  };
  const grantShares = new Map<string, number>();
  for (const e of entries) {
    if (e.hold_id) {
      grantShares.set(e.hold_id, (grantShares.get(e.hold_id) ?? 0) + (e.hold_micros ?? 0));
      continue;
    }
    const hold = account.holds?.[e._id];
    if (!hold) continue;
    release(e._id, hold.micros, hold.key_hash);
    $unset[`holds.${e._id}`] = true;
  }
  for (const [grantId, share] of grantShares) {
    const grant = account.holds?.[grantId];
    // Gone: expired and swept (its holder died), so nothing is left to settle.
    if (!grant) continue;
    const settled = Math.min(share, grant.micros);
    release(grantId, settled, grant.key_hash);
    if (grant.micros === settled && grant.retired) $unset[`holds.${grantId}`] = true;
    else $set[`holds.${grantId}.micros`] = grant.micros - settled;
  }
}

/** Each entry's spend counts in the periods of the call's own time, so a batch spanning midnight splits right. */
function spendAfter(current: Record<string, KeySpendDoc>, entries: LedgerEntry[], logger: Logger): Map<string, KeySpendDoc> {
  const next = new Map<string, KeySpendDoc>();
  for (const e of entries) {
    if (!e.key_hash) continue;
    if (!isFieldName(e.key_hash)) {
      logger.error({ requestId: e._id, keyHash: e.key_hash }, 'key hash is not a valid field name; key spend not tracked');
      continue;
    }
    const before = next.get(e.key_hash) ?? current[e.key_hash];
    next.set(e.key_hash, addSpend(before, e.charged_micros, periodLabels(new Date(e.created_at_ms))));
  }
  return next;
}
