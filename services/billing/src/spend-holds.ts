import { applyFactorPpm, type PriceBook, type TokenCounts } from '@gw/catalog';
import { InputError, microsToUsd, PaymentRequiredError, type Logger } from '@gw/platform';
import type { Collection, Filter, Store } from '@gw/store';
import { accountsCollection, isFieldName, LIST_PRICE_FACTOR_PPM, type AccountDoc, type SpendHold } from './accounts';
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
  /**
   * A spend grant of up to this much (0: hold the call's worst case alone). The grant is capped by what the
   * account and key have left, never below the call's worst case, and it never draws on the allowance.
   */
  grantMicros?: number;
}

export interface ReserveResult {
  /** What is held under the request id: the call's worst case, or the grant. */
  heldMicros: number;
  /** The call's worst case, priced with `priceFactorPpm`. */
  callMicros: number;
  priceFactorPpm: number;
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

  /** Holds the call's worst-case cost (or a grant), or throws 402. Repeating a request id returns the hold it already has. */
  async reserve(input: ReserveInput): Promise<ReserveResult> {
    if (!isFieldName(input.requestId)) throw new InputError('request_id must be a platform request id', 'request_id');
    const grantMicros = input.grantMicros ?? 0;
    // A re-run of a call already billed (an async job whose worker died after reporting) is not charged again.
    if (grantMicros === 0 && await this.ledger.findOne({ _id: input.requestId })) return { heldMicros: 0, callMicros: 0, priceFactorPpm: LIST_PRICE_FACTOR_PPM };
    const list = this.priceBook.worstCaseListMicros(input.deployments, input.bounds);
    const keyField = isFieldName(input.keyHash) ? input.keyHash : '';
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const account = await this.accounts.findOne({ _id: input.accountId });
      if (!account) throw insufficientBalance();
      const worst = applyFactorPpm(list, account.price_factor_ppm);
      const priced = { callMicros: worst, priceFactorPpm: account.price_factor_ppm };
      const existing = account.holds?.[input.requestId];
      if (existing) return { heldMicros: existing.micros, ...priced };
      const available = account.wallet_micros + account.credit_micros;
      const keyLimit = input.keyLimitMicros !== null && keyField ? this.keyRoom(account, keyField, input) : null;
      // A grant takes only what is left (never the allowance): near a limit it shrinks to the call itself.
      let amount = worst;
      if (grantMicros > worst) {
        const left = Math.min(available - 1 - (account.held_micros ?? 0), keyLimit ? keyLimit.available - 1 - (account.key_held_micros?.[keyField] ?? 0) : Infinity);
        amount = Math.max(worst, Math.min(grantMicros, left));
      }
      const filter: Filter = {
        _id: account._id,
        wallet_micros: account.wallet_micros,
        credit_micros: account.credit_micros,
        [`holds.${input.requestId}`]: { $exists: false },
        held_micros: this.heldGuard(account.held_micros, available, worst, amount, (left) => balanceRefusal(left, worst, input.bounds)),
      };
      if (keyLimit) {
        filter[`key_spend.${keyField}.total_micros`] = keyLimit.totalGuard;
        filter[`key_held_micros.${keyField}`] = this.heldGuard(account.key_held_micros?.[keyField], keyLimit.available, worst, amount, (left) => keyLimitRefusal(left, worst, input));
      }
      const hold: SpendHold = { micros: amount, key_hash: keyField, expires_at_ms: this.now().getTime() + this.options.holdTtlMs };
      const $inc: Record<string, number> = { held_micros: amount };
      if (keyField) $inc[`key_held_micros.${keyField}`] = amount;
      const res = await this.accounts.updateOne(filter, { $inc, $set: { [`holds.${input.requestId}`]: hold } });
      if (res.matched === 1) return { heldMicros: amount, ...priced };
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

  /**
   * Retires a spend grant: gives back `unusedMicros` (what none of its calls will use) and marks it so the
   * posting that settles its last call drops it. Giving back more than is left drops what is left.
   */
  async retireGrant(accountId: string, grantId: string, unusedMicros: number): Promise<boolean> {
    if (!isFieldName(grantId)) throw new InputError('request_id must be a platform request id', 'request_id');
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const account = await this.accounts.findOne({ _id: accountId });
      const hold = account?.holds?.[grantId];
      if (!hold) return false;
      const given = Math.min(unusedMicros, hold.micros);
      const $inc: Record<string, number> = { held_micros: -given };
      if (hold.key_hash) $inc[`key_held_micros.${hold.key_hash}`] = -given;
      const rest = hold.micros - given;
      const change = rest === 0
        ? { $inc, $unset: { [`holds.${grantId}`]: true as const } }
        : { $inc, $set: { [`holds.${grantId}.micros`]: rest, [`holds.${grantId}.retired`]: true } };
      const res = await this.accounts.updateOne({ _id: accountId, [`holds.${grantId}.micros`]: hold.micros }, change);
      if (res.matched === 1) return true;
    }
    throw new Error(`grant retirement on account ${accountId} lost ${MAX_ATTEMPTS} concurrent updates in a row`);
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

  /** What the key may still spend against its limit, and the guard that keeps that reading true at write time. */
  private keyRoom(account: AccountDoc, keyField: string, input: ReserveInput): { available: number; totalGuard: unknown } {
    const spent = spendAgainstLimit(keySpendView(keyField, account.key_spend?.[keyField], this.now()), input.keyLimitReset);
    const total = account.key_spend?.[keyField]?.total_micros;
    // Any landed spend changes the total, so an unchanged total means `spent` still holds.
    return { available: (input.keyLimitMicros ?? 0) - spent, totalGuard: total === undefined ? { $exists: false } : total };
  }

  /**
   * Admits when something remains (`available - held > 0`) and the worst case fits in what remains plus the
   * allowance; a larger grant must fit in what remains alone. As a guard on the held total it holds at write
   * time against every concurrent reserve.
   */
  private heldGuard(held: number | undefined, available: number, worst: number, amount: number, refusal: (leftMicros: number) => PaymentRequiredError): unknown {
    const maxHeld = amount > worst ? available - 1 - amount : Math.min(available - 1, available + this.options.allowanceMicros - worst);
    if ((held ?? 0) > maxHeld) throw refusal(available - (held ?? 0));
    // A total not written yet reads as zero; guarding its absence keeps the check exact for the first hold.
    return held === undefined ? { $exists: false } : { $lte: maxHeld };
  }
}

const insufficientBalance = () => new PaymentRequiredError('Insufficient balance: add funds to continue', 'insufficient_balance');

/**
 * A refusal while something is left is about this call's size, not an empty balance: saying "add funds" to an
 * account with dollars left (a model's whole output priced as the worst case) sends its owner the wrong way.
 */
function balanceRefusal(leftMicros: number, worstMicros: number, bounds: TokenCounts): PaymentRequiredError {
  if (leftMicros <= 0) return insufficientBalance();
  return new PaymentRequiredError(`${tooLarge(worstMicros, bounds)}, more than the ${microsToUsd(leftMicros)} USD the account has left to spend; ${lessAdvice(bounds)} or add funds`, 'insufficient_balance');
}

function keyLimitRefusal(leftMicros: number, worstMicros: number, input: ReserveInput): PaymentRequiredError {
  const period = input.keyLimitReset ? `${input.keyLimitReset} ` : '';
  const limit = `${period}spending limit of ${microsToUsd(input.keyLimitMicros ?? 0)} USD`;
  if (leftMicros <= 0) return new PaymentRequiredError(`This key has reached its ${limit}`, 'key_limit_exceeded');
  return new PaymentRequiredError(`${tooLarge(worstMicros, input.bounds)}, more than the ${microsToUsd(leftMicros)} USD left of this key's ${limit}; ${lessAdvice(input.bounds)} or raise the limit`, 'key_limit_exceeded');
}

function tooLarge(worstMicros: number, bounds: TokenCounts): string {
  const parts = [
    bounds.completionTokens > 0 ? `its prompt and up to ${bounds.completionTokens} output tokens` : '',
    bounds.images ? `up to ${bounds.images} images` : '',
    bounds.audioSeconds ? `up to ${bounds.audioSeconds} seconds of audio` : '',
    bounds.videoSeconds ? `up to ${bounds.videoSeconds} seconds of video` : '',
  ].filter((p) => p !== '');
  return `This call may cost up to ${microsToUsd(worstMicros)} USD${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

const lessAdvice = (bounds: TokenCounts) =>
  bounds.completionTokens > 0 ? 'cap its output (max_completion_tokens, max_tokens or max_output_tokens)' : 'ask for less';
