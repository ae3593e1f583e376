import type { Logger } from '@gw/platform';
import type { Collection, Doc, Store } from '@gw/store';
import type { SeedAccount } from './config';
import type { KeySpendDoc } from './key-spend';

export const LIST_PRICE_FACTOR_PPM = 1_000_000;

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
  /** Last applied posting ids (bounded): a posting found here has landed and must not land again. */
  recent_postings: string[];
  key_spend: Record<string, KeySpendDoc>;
  created_at_ms: number;
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

export function newAccountFields(seed: Omit<SeedAccount, 'id'>, nowMs: number): Omit<AccountDoc, '_id'> {
  return {
    wallet_micros: seed.walletMicros,
    credit_micros: seed.creditMicros,
    price_factor_ppm: seed.priceFactorPpm,
    version: 0,
    recent_postings: [],
    key_spend: {},
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
