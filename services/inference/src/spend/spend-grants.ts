import { randomUUID } from 'node:crypto';
import { applyFactorPpm, type PriceBook } from '@gw/catalog';
import { PaymentRequiredError, UnavailableError, type Identity, type Logger } from '@gw/platform';
import type { CallHold } from '@gw/billed-call';
import type { CallBounds, SpendGuard } from './spend-guard';

export interface SpendGrantOptions {
  /** The largest grant one instance asks for per key; 0 turns grants off (a billing call per call). */
  maxGrantMicros: number;
  /** A grant is sized for about this many calls like the one that asks for it. */
  callsPerGrant: number;
  /** After this a grant takes no new calls and gives back what they did not use. */
  lifetimeMs: number;
}

/** One spend grant this instance holds in billing for one key, and what its calls have taken of it. */
interface Grant {
  id: string;
  accountId: string;
  granted: number;
  used: number;
  priceFactorPpm: number;
  retiresAt: number;
}

/** Renewal rounds a call waits through before it asks billing for a hold of its own. */
const MAX_RENEWALS = 3;

/**
 * Spend limits without a billing call per call. Each instance holds a spend grant per key in billing (one
 * hold made by one atomic Reserve, so the limits still hold across any number of instances) and admits calls
 * against it locally, pricing each call's worst case with the one price function and the account's factor.
 * A call's usage event names the grant and its share, and billing's posting settles that share. A grant
 * lives `lifetimeMs` (or until it is spent); then it is retired and what its calls did not use goes back.
 * Near a limit billing sizes grants down to the call itself, so refusals are as exact as with a hold per call.
 */
export class SpendGrants {
  private readonly current = new Map<string, Grant>();
  private readonly renewals = new Map<string, Promise<unknown>>();
  /** A key's last retirement, which its next grant waits for so the grant is sized on what is really held. */
  private readonly retirements = new Map<string, Promise<boolean>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly guard: SpendGuard,
    private readonly priceBook: PriceBook,
    private readonly options: SpendGrantOptions,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => this.retireExpired(), Math.max(100, options.lifetimeMs)).unref();
  }

  /** Holds the call's worst case under `requestId` itself (idempotent: an async job's re-runs hold once). */
  reserve(id: Identity, requestId: string, call: CallBounds, traceId: string): Promise<CallHold> {
    return this.guard.reserve(id, requestId, call, traceId);
  }

  /** Drops a hold of the call's own (a cancelled queued job). */
  release(id: Identity, requestId: string, traceId: string): void {
    this.guard.release(id, requestId, traceId);
  }

  /** Admits the call under the key's grant (asking billing for a new one when needed), or throws billing's 402. */
  async admit(id: Identity, requestId: string, call: CallBounds, traceId: string): Promise<CallHold> {
    if (this.options.maxGrantMicros === 0) return this.guard.reserve(id, requestId, call, traceId);
    const scope = scopeOf(id);
    const listWorst = this.priceBook.worstCaseListMicros(call.deployments, this.guard.tokenBounds(call));
    for (let round = 0; round < MAX_RENEWALS; round++) {
      const taken = this.take(scope, listWorst);
      if (taken) return taken;
      const pending = this.renewals.get(scope);
      if (pending) {
        // Another call is renewing this key's grant: try the new one, or renew again if that call's own size was
        // refused. Any other failure (billing did not answer) is this call's too: another renewal would only
        // wait out billing's deadline once more, and the calls queued behind it would wait for each in turn.
        const failure = await pending.then(() => null, (err: unknown) => err);
        if (failure !== null && !(failure instanceof PaymentRequiredError)) throw failure;
        continue;
      }
      const renewal = this.renew(scope, id, call, listWorst, traceId);
      this.renewals.set(scope, renewal);
      try {
        return await renewal;
      } finally {
        this.renewals.delete(scope);
      }
    }
    // A burst outran every grant billing would give: this call holds its own worst case.
    return this.guard.reserve(id, requestId, call, traceId);
  }

  /** A call that ends without usage gives its hold back: a grant's share to the grant while it is current, else to billing. */
  giveBack(id: Identity, hold: CallHold, traceId: string): void {
    if (!hold.grant) {
      this.guard.release(id, hold.holdId, traceId);
      return;
    }
    const grant = this.current.get(scopeOf(id));
    if (grant?.id === hold.holdId) {
      grant.used -= hold.micros;
      return;
    }
    void this.guard.retireGrant(id.accountId, hold.holdId, hold.micros, traceId);
  }

  /** Gives every grant's unused part back (a graceful stop). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const scope of [...this.current.keys()]) this.retire(scope);
    await Promise.all(this.retirements.values());
  }

  private take(scope: string, listWorst: number): CallHold | null {
    const grant = this.current.get(scope);
    if (!grant) return null;
    if (this.now() >= grant.retiresAt) {
      this.retire(scope);
      return null;
    }
    const micros = applyFactorPpm(listWorst, grant.priceFactorPpm);
    if (grant.used + micros > grant.granted) {
      this.retire(scope);
      return null;
    }
    grant.used += micros;
    return { holdId: grant.id, micros, grant: true };
  }

  /** Asks billing for a new grant that covers this call; the call is its first. */
  private async renew(scope: string, id: Identity, call: CallBounds, listWorst: number, traceId: string): Promise<CallHold> {
    const previous = this.current.get(scope);
    const estimate = applyFactorPpm(listWorst, previous?.priceFactorPpm ?? 1_000_000);
    const wanted = Math.min(this.options.maxGrantMicros, estimate * this.options.callsPerGrant);
    const grantId = `grant-${randomUUID()}`;
    // Billing did not answer the last retirement: a grant asked now would wait out its deadline a second time.
    if ((await this.retirements.get(scope)) === false) throw new UnavailableError('Billing is unavailable right now; try again shortly', 'billing_unavailable');
    const held = await this.guard.grant(id, grantId, call, wanted, traceId);
    if (this.current.has(scope)) this.retire(scope);
    this.current.set(scope, {
      id: grantId, accountId: id.accountId, granted: held.heldMicros, used: held.callMicros,
      priceFactorPpm: held.priceFactorPpm, retiresAt: this.now() + this.options.lifetimeMs,
    });
    return { holdId: grantId, micros: held.callMicros, grant: true };
  }

  private retire(scope: string): void {
    const grant = this.current.get(scope);
    if (!grant) return;
    this.current.delete(scope);
    const done = this.guard.retireGrant(grant.accountId, grant.id, Math.max(0, grant.granted - grant.used), `grant-retire-${grant.id}`)
      .finally(() => { if (this.retirements.get(scope) === done) this.retirements.delete(scope); });
    this.retirements.set(scope, done);
  }

  private retireExpired(): void {
    const now = this.now();
    for (const [scope, grant] of this.current) if (now >= grant.retiresAt) this.retire(scope);
  }
}

/** A grant serves one key under one set of limits: a key whose limit changed gets a grant of its own. */
function scopeOf(id: Identity): string {
  return `${id.accountId}\u0000${id.keyHash}\u0000${id.keyLimitMicros ?? ''}\u0000${id.keyLimitReset ?? ''}`;
}
