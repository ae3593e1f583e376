import type { Logger } from '@gw/platform';
import type { Collection, Doc, Store } from '@gw/store';
import type { SeedAccount } from './config';
import type { KeySpendDoc } from './key-spend';

export const LIST_PRICE_FACTOR_PPM = 1_000_000;

/** Key hashes, request ids and posting ids become field names (`key_spend.<hash>`); nothing else can be a path segment. */
export const isFieldName = (value: string): boolean => /^[A-Za-z0-9_-]{1,128}$/.test(value);

/**
 * One account. Charges reduce `wallet_micros` (it may go below zero down to `-credit_micros`); balance and
 * key spend live in this one document so a posting changes both in one atomic write.
 */
export interface AccountDoc extends Doc {
  wallet_micros: number;
  credit_micros: number;
  price_factor_ppm: number;
  /** Bumped by every balance write: the optimistic-concurrency guard, and the order of BalanceChanged events. */
  version: number;
  /**
   * Postings whose balance change has landed here, kept while any of their ledger entries may still read
   * `applying`: a re-driven posting found here must not land again. The next posting drops the finished ones.
   */
  landed_postings: Record<string, true>;
  /** Written by versions before `landed_postings`; moved there by the next posting (see posting.ts). */
  recent_postings?: string[];
  key_spend: Record<string, KeySpendDoc>;
  /** Sum of `holds`, and of each key's holds: what in-flight calls may still spend. */
  held_micros: number;
  key_held_micros: Record<string, number>;
  /** Open holds by request id (see spend-holds.ts). */
  holds: Record<string, SpendHold>;
  created_at_ms: number;
}

/** A call's worst-case cost, held from its reservation until its usage lands (or it is released / expires). */
export interface SpendHold {
  micros: number;
  /** Empty when the key hash cannot be a field name (its spend is not tracked either). */
  key_hash: string;
  expires_at_ms: number;
  /**
   * A spend grant (one hold many calls run under) whose holder has given back what no call will use: the
   * calls' postings settle the rest, and the last one drops the hold.
   */
  retired?: boolean;
}

export interface BalanceView {
  account_id: string;
  wallet_micros: number;
  credit_micros: number;
  spendable_micros: number;
  price_factor_ppm: number;
  version: number;
}

export function accountsCollection(store: Store): Collection<AccountDoc> {
  return store.collection<AccountDoc>('accounts');
}

/** The expired-hold sweep reads the accounts holding anything; without this index it read every account. */
export async function ensureAccountIndexes(accounts: Collection<AccountDoc>): Promise<void> {
  await accounts.ensureIndex({ fields: { held_micros: 1 } });
}

export function newAccountFields(seed: Omit<SeedAccount, 'id'>, nowMs: number): Omit<AccountDoc, '_id'> {
  return {
    wallet_micros: seed.walletMicros,
    credit_micros: seed.creditMicros,
    price_factor_ppm: seed.priceFactorPpm,
    version: 0,
    landed_postings: {},
    key_spend: {},
    held_micros: 0,
    key_held_micros: {},
    holds: {},
    created_at_ms: nowMs,
  };
}

/** Creates each missing seed account; an existing account keeps its balance, whatever the seed says. */
export async function ensureSeedAccounts(accounts: Collection<AccountDoc>, seeds: SeedAccount[], logger: Logger, nowMs: number): Promise<void> {
  for (const seed of seeds) {
    const res = await accounts.updateOne({ _id: seed.id }, { $setOnInsert: newAccountFields(seed, nowMs) }, { upsert: true });
    if (res.upsertedId) logger.info({ accountId: seed.id }, 'seed account created');
  }
}

export function balanceView(account: AccountDoc): BalanceView {
  return {
    account_id: account._id,
    wallet_micros: account.wallet_micros,
    credit_micros: account.credit_micros,
    spendable_micros: account.wallet_micros + account.credit_micros,
    price_factor_ppm: account.price_factor_ppm,
    version: account.version,
  };
}
