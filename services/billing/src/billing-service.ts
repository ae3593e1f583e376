import { AuthenticationError, InputError, NotFoundError, PaymentRequiredError, microsToUsd } from '@gw/platform';
import type { Store } from '@gw/store';
import { accountsCollection, balanceView, isFieldName, type BalanceView } from './accounts';
import { keySpendView, spendAgainstLimit, type KeySpendView, type LimitReset } from './key-spend';
import { findAccountEntry, ledgerCollection } from './ledger';
import { keyHoldersCollection } from './key-holders';
import { ledgerMediaCollection } from './ledger-media';
import { requestRecord, type RequestRecord } from './request-record';

/** Request ids one charge lookup may ask about. */
export const MAX_CHARGE_LOOKUP = 1_000;

export interface PreauthorizeInput {
  accountId: string;
  keyHash: string;
  /** Null when the key has no spending limit. */
  keyLimitMicros: number | null;
  keyLimitReset: LimitReset;
}

export interface PreauthorizeResult {
  balance: BalanceView;
  keyPeriodUsageMicros: number;
}

export interface BalanceUsd {
  wallet: string;
  credit: string;
  spendable: string;
  currency: 'USD';
}

/** The read side of billing, shared by the gRPC and HTTP adapters. */
export class BillingService {
  private readonly accounts;
  private readonly ledger;
  private readonly media;
  private readonly keyHolders;

  constructor(store: Store, private readonly now: () => Date = () => new Date()) {
    this.accounts = accountsCollection(store);
    this.ledger = ledgerCollection(store);
    this.media = ledgerMediaCollection(store);
    this.keyHolders = keyHoldersCollection(store);
  }

  /** Refuses with 402 when nothing is spendable or the key has used up its limit for the current period. */
  async preauthorize(input: PreauthorizeInput): Promise<PreauthorizeResult> {
    const account = await this.accounts.findOne({ _id: input.accountId });
    if (!account) throw new PaymentRequiredError('Insufficient balance', 'insufficient_balance');
    const balance = balanceView(account);
    const usage = spendAgainstLimit(keySpendView(input.keyHash, account.key_spend?.[input.keyHash], this.now()), input.keyLimitReset);
    if (balance.spendable_micros <= 0) throw new PaymentRequiredError('Insufficient balance', 'insufficient_balance');
    if (input.keyLimitMicros !== null && usage >= input.keyLimitMicros) {
      const period = input.keyLimitReset ? `${input.keyLimitReset} ` : '';
      throw new PaymentRequiredError(`This key has reached its ${period}spending limit of ${microsToUsd(input.keyLimitMicros)} USD`, 'key_limit_exceeded');
    }
    return { balance, keyPeriodUsageMicros: usage };
  }

  async balance(accountId: string): Promise<BalanceView> {
    const account = await this.accounts.findOne({ _id: accountId });
    if (!account) throw new NotFoundError(`Account ${accountId} not found`, null, 'account_not_found');
    return balanceView(account);
  }

  async balanceUsd(accountId: string): Promise<BalanceUsd> {
    const b = await this.balance(accountId);
    return { wallet: microsToUsd(b.wallet_micros), credit: microsToUsd(b.credit_micros), spendable: microsToUsd(b.spendable_micros), currency: 'USD' };
  }

  /**
   * Spend per key in the current periods; a key that never spent reports zeros. With `onlyAccount`, asking
   * about a key that spent under another account is refused.
   */
  async keyUsage(keyHashes: string[], onlyAccount: string | null = null): Promise<KeySpendView[]> {
    const hashes = [...new Set(keyHashes.filter(isFieldName))];
    const now = this.now();
    if (hashes.length === 0) return keyHashes.map((h) => keySpendView(h, undefined, now));
    const holders = await this.keyHolders.find({ _id: { $in: hashes } });
    if (onlyAccount !== null && holders.some((h) => h.account_id !== onlyAccount)) {
      throw new AuthenticationError('These credentials do not belong to the account of every key asked about', 'account_mismatch');
    }
    const accountIds = [...new Set(holders.map((h) => h.account_id))];
    const accounts = accountIds.length > 0 ? await this.accounts.find({ _id: { $in: accountIds } }) : [];
    const spendOf = (h: string) => accounts.find((a) => a.key_spend?.[h])?.key_spend[h];
    return keyHashes.map((h) => keySpendView(h, spendOf(h), now));
  }

  /**
   * The charges of the account's calls among `requestIds` whose charge has landed on the balance; ids of
   * other accounts or not yet billed are left out, so a caller waiting for its calls' billing polls this.
   */
  async requestCharges(accountId: string, requestIds: string[]): Promise<{ request_id: string; list_micros: number; charged_micros: number }[]> {
    if (requestIds.length > MAX_CHARGE_LOOKUP) throw new InputError(`At most ${MAX_CHARGE_LOOKUP} request ids per lookup`, 'request_ids');
    const ids = [...new Set(requestIds)];
    if (ids.length === 0) return [];
    const entries = await this.ledger.find({ _id: { $in: ids }, account_id: accountId, state: 'applied' });
    return entries.map((e) => ({ request_id: e._id, list_micros: e.list_micros, charged_micros: e.charged_micros }));
  }

  /** Only the caller's own calls are visible; anything else is indistinguishable from an unknown id. */
  async requestRecord(accountId: string, id: string): Promise<RequestRecord> {
    const entry = await findAccountEntry(this.ledger, this.media, accountId, id);
    if (!entry) throw new NotFoundError(`No billing record for ${id}`, 'request_id', 'request_not_found');
    return requestRecord(entry);
  }
}
