import { applyFactorPpm, type PriceBook, type TokenCounts } from '@gw/catalog';
import { InputError, microsToUsd, PaymentRequiredError, type Logger } from '@gw/platform';
import type { Collection, Filter, Store } from '@gw/store';
import { accountsCollection, isFieldName, type AccountDoc, type SpendHold } from './accounts';
import { keySpendView, spendAgainstLimit, type LimitReset } from './key-spend';
import { ledgerCollection, type LedgerEntry } from './ledger';

export interface ReserveInput {
  accountId: string;
  keyHash: string;
  /** Null when the key has no spending limit. */
  keyLimitMicros: number | null;
  keyLimitReset: LimitReset;
  requestId: string;
  /** Every deployment the call may be served by, fallbacks included. */
  deployments: readonly string[];
  bounds: TokenCounts;
}

export interface SpendHoldsOptions {
  /** The most a burst may take past a balance or a key limit: a call is admitted while something remains and its worst case fits within remaining + this. */
  allowanceMicros: number;
  /** A hold no usage settled (the call's instance died before reporting) is dropped by the sweeper after this. */
  holdTtlMs: number;
}

const MAX_ATTEMPTS = 50;

/**
 * Holds on an account: a call reserves its worst-case cost before the provider is called, and its usage
 * settles the hold in the posting that charges it (posting.ts). Balance, key spend and holds share the
 * account document, so every check-and-hold is one guarded single-document write. Reserves `$inc` the hold
 * totals under range guards instead of the version guard, so concurrent reserves of one account do not
 * invalidate each other; only a landing posting (a wallet or key spend change) makes a reserve retry.
 */
export class SpendHolds {
  private readonly accounts: Collection<AccountDoc>;
  private readonly ledger: Collection<LedgerEntry>;

  constructor(
    store: Store,
    private readonly priceBook: PriceBook,
    private readonly options: SpendHoldsOptions,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.accounts = accountsCollection(store);
    this.ledger = ledgerCollection(store);
  }

  /** Holds the call's worst-case cost, or throws 402. Repeating a request id returns the hold it already has. */
  async reserve(input: ReserveInput): Promise<{ heldMicros: number }> {
    if (!isFieldName(input.requestId)) throw new InputError('request_id must be a platform request id', 'request_id');
    // A re-run of a call already billed (an async job whose worker died after reporting) is not charged again.
    if (await this.ledger.findOne({ _id: input.requestId })) return { heldMicros: 0 };
    const list = this.priceBook.worstCaseListMicros(input.deployments, input.bounds);
    const keyField = isFieldName(input.keyHash) ? input.keyHash : '';
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const account = await this.accounts.findOne({ _id: input.accountId });
      if (!account) throw insufficientBalance();
      const existing = account.holds?.[input.requestId];
      if (existing) return { heldMicros: existing.micros };
      const worst = applyFactorPpm(list, account.price_factor_ppm);
      const filter: Filter = {
        _id: account._id,
        wallet_micros: account.wallet_micros,
        credit_micros: account.credit_micros,
        [`holds.${input.requestId}`]: { $exists: false },
        held_micros: this.heldGuard(account.held_micros, account.wallet_micros + account.credit_micros, worst, insufficientBalance),
      };
      if (input.keyLimitMicros !== null && keyField) {
        const spent = spendAgainstLimit(keySpendView(keyField, account.key_spend?.[keyField], this.now()), input.keyLimitReset);
        const total = account.key_spend?.[keyField]?.total_micros;
        // Any landed spend changes the total, so an unchanged total means `spent` still holds.
        filter[`key_spend.${keyField}.total_micros`] = total === undefined ? { $exists: false } : total;
        filter[`key_held_micros.${keyField}`] = this.heldGuard(account.key_held_micros?.[keyField], input.keyLimitMicros - spent, worst, () => keyLimitReached(input));
      }
      const hold: SpendHold = { micros: worst, key_hash: keyField, expires_at_ms: this.now().getTime() + this.options.holdTtlMs };
      const $inc: Record<string, number> = { held_micros: worst };
      if (keyField) $inc[`key_held_micros.${keyField}`] = worst;
      const res = await this.accounts.updateOne(filter, { $inc, $set: { [`holds.${input.requestId}`]: hold } });
      if (res.matched === 1) return { heldMicros: worst };
      this.logger.debug({ accountId: input.accountId, attempt }, 'account changed concurrently; retrying the reservation');
    }
    throw new Error(`reservation on account ${input.accountId} lost ${MAX_ATTEMPTS} concurrent updates in a row`);
  }

  /** Drops a hold no usage will settle; exactly one of concurrent releases (or a settling posting) wins. */
  async release(accountId: string, requestId: string): Promise<boolean> {
    if (!isFieldName(requestId)) throw new InputError('request_id must be a platform request id', 'request_id');
    const account = await this.accounts.findOne({ _id: accountId });
    const hold = account?.holds?.[requestId];
    if (!hold) return false;
    return this.drop(accountId, requestId, hold);
  }

  /** Drops expired holds: the backstop for calls whose instance died before reporting usage or releasing. */
  async sweepExpired(): Promise<number> {
    const nowMs = this.now().getTime();
    let dropped = 0;
    for (const account of await this.accounts.find({ held_micros: { $gt: 0 } })) {
      for (const [requestId, hold] of Object.entries(account.holds ?? {})) {
        if (hold.expires_at_ms <= nowMs && await this.drop(account._id, requestId, hold)) dropped++;
      }
    }
    if (dropped > 0) this.logger.warn({ dropped }, 'expired spend holds dropped (calls that reported no usage)');
    return dropped;
  }

  private async drop(accountId: string, requestId: string, hold: SpendHold): Promise<boolean> {
    const $inc: Record<string, number> = { held_micros: -hold.micros };
    if (hold.key_hash) $inc[`key_held_micros.${hold.key_hash}`] = -hold.micros;
    const res = await this.accounts.updateOne(
      { _id: accountId, [`holds.${requestId}.micros`]: hold.micros, [`holds.${requestId}.expires_at_ms`]: hold.expires_at_ms },
      { $inc, $unset: { [`holds.${requestId}`]: true } },
    );
    return res.matched === 1;
  }

  /**
   * Admits when something remains (`available - held > 0`) and the worst case fits in what remains plus the
   * allowance; as a guard on the held total it holds at write time against every concurrent reserve.
   */
  private heldGuard(held: number | undefined, available: number, worst: number, refusal: () => PaymentRequiredError): unknown {
    const maxHeld = Math.min(available - 1, available + this.options.allowanceMicros - worst);
    if ((held ?? 0) > maxHeld) throw refusal();
    // A total not written yet reads as zero; guarding its absence keeps the check exact for the first hold.
    return held === undefined ? { $exists: false } : { $lte: maxHeld };
  }
}

const insufficientBalance = () => new PaymentRequiredError('Insufficient balance: add funds to continue', 'insufficient_balance');

function keyLimitReached(input: ReserveInput): PaymentRequiredError {
  const period = input.keyLimitReset ? `${input.keyLimitReset} ` : '';
  return new PaymentRequiredError(`This key has reached its ${period}spending limit of ${microsToUsd(input.keyLimitMicros ?? 0)} USD`, 'key_limit_exceeded');
}
