import { callUnary, PaymentRequiredError, type Identity, type Logger } from '@gw/platform';
import type { BalanceChanged, BillingServiceClient, KeySpend, PreauthorizeRequest, PreauthorizeResult } from '@gw/proto';

interface AccountSnapshot {
  spendableMicros: number;
  version: number;
  fetchedAt: number;
  /** Charges this instance observed since the snapshot; billing has not reported them back yet. */
  unreflectedMicros: number;
  keys: Map<string, KeySpend>;
  refreshing?: Promise<void>;
}

/**
 * Pre-authorization on the hot path without a synchronous call: the first call of an account asks billing
 * (gRPC `Preauthorize`), later calls answer from the cached snapshot, kept fresh by `BalanceChanged` events
 * and a background refresh. Charges this instance made since the last snapshot are subtracted locally, so
 * a burst cannot spend past zero by more than the calls already in flight when it got there.
 */
export class SpendGuard {
  private readonly accounts = new Map<string, AccountSnapshot>();

  constructor(
    private readonly billing: BillingServiceClient,
    private readonly logger: Logger,
    private readonly refreshMs: number,
  ) {}

  async authorize(id: Identity, traceId: string): Promise<void> {
    let snap = this.accounts.get(id.accountId);
    if (!snap) {
      snap = await this.fetch(id, traceId);
    } else if (Date.now() - snap.fetchedAt > this.refreshMs && !snap.refreshing) {
      const current = snap;
      current.refreshing = this.fetch(id, traceId).then(() => undefined, (err) => {
        this.logger.warn({ err }, 'balance refresh failed; serving the cached balance');
      }).finally(() => { current.refreshing = undefined; });
    }
    if (snap.spendableMicros - snap.unreflectedMicros <= 0) {
      throw new PaymentRequiredError('Insufficient balance: add funds to continue', 'insufficient_balance');
    }
    if (id.keyLimitMicros !== null) {
      const spent = periodSpend(snap.keys.get(id.keyHash), id.keyLimitReset);
      if (spent >= id.keyLimitMicros) throw new PaymentRequiredError('This key has reached its spending limit', 'key_limit_exceeded');
    }
  }

  /** Records a charge this instance caused, until billing's next balance event reflects it. */
  noteCharge(accountId: string, keyHash: string, micros: number): void {
    const snap = this.accounts.get(accountId);
    if (!snap) return;
    snap.unreflectedMicros += micros;
    const k = snap.keys.get(keyHash);
    if (k) {
      k.total_micros += micros;
      k.daily_micros += micros;
      k.weekly_micros += micros;
      k.monthly_micros += micros;
    }
  }

  /** Applies a balance event from billing; stale versions are ignored. */
  applyEvent(ev: BalanceChanged): void {
    const snap = this.accounts.get(ev.account_id);
    if (!snap || ev.version <= snap.version) return;
    snap.spendableMicros = ev.spendable_micros;
    snap.version = ev.version;
    snap.fetchedAt = Date.now();
    snap.unreflectedMicros = 0;
    for (const k of ev.keys ?? []) snap.keys.set(k.key_hash, { ...k });
  }

  private async fetch(id: Identity, traceId: string): Promise<AccountSnapshot> {
    // Billing answers 402 itself for an empty account; the snapshot still records the balance so the
    // next calls are refused from cache.
    try {
      const res = await callUnary<PreauthorizeRequest, PreauthorizeResult>(this.billing, this.billing.Preauthorize, {
        account_id: id.accountId,
        key_hash: id.keyHash,
        has_key_limit: id.keyLimitMicros !== null,
        key_limit_micros: id.keyLimitMicros ?? 0,
        key_limit_reset: id.keyLimitReset ?? '',
      }, { deadlineMs: 2000, traceId });
      return this.store(id, res.balance?.spendable_micros ?? 0, res.balance?.version ?? 0, res.key_period_usage_micros, id.keyLimitReset);
    } catch (err) {
      if (err instanceof PaymentRequiredError || (err as { status?: number }).status === 402) {
        this.accounts.delete(id.accountId);
      }
      throw err;
    }
  }

  private store(id: Identity, spendable: number, version: number, keyPeriodUsage: number, reset: Identity['keyLimitReset']): AccountSnapshot {
    const prev = this.accounts.get(id.accountId);
    const keys = prev?.keys ?? new Map<string, KeySpend>();
    const spend = keys.get(id.keyHash) ?? { key_hash: id.keyHash, total_micros: 0, daily_micros: 0, weekly_micros: 0, monthly_micros: 0 };
    spend[periodField(reset)] = keyPeriodUsage;
    keys.set(id.keyHash, spend);
    if (!prev || version >= prev.version) {
      this.accounts.set(id.accountId, { spendableMicros: spendable, version, fetchedAt: Date.now(), unreflectedMicros: 0, keys });
    }
    return this.accounts.get(id.accountId)!;
  }
}

function periodField(reset: Identity['keyLimitReset']) {
  switch (reset) {
    case 'daily': return 'daily_micros' as const;
    case 'weekly': return 'weekly_micros' as const;
    case 'monthly': return 'monthly_micros' as const;
    default: return 'total_micros' as const;
  }
}

function periodSpend(k: KeySpend | undefined, reset: Identity['keyLimitReset']): number {
  return k ? k[periodField(reset)] : 0;
}
