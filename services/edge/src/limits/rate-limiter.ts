import { RateLimitError, type Identity } from '@gw/platform';
import type { WindowCounters } from './window-counters';

/** Per-minute budgets of one scope; 0 means no limit. */
export interface MinuteLimits {
  requestsPerMinute: number;
  tokensPerMinute: number;
}

export interface RateLimitSettings {
  key: MinuteLimits;
  account: MinuteLimits;
}

export interface Admission {
  /** The `x-ratelimit-*` headers of the tightest scope, for the response (refused or not). */
  headers: Record<string, string>;
  /** Set when the call is refused: the 429 to answer (carrying `Retry-After`). */
  refusal: RateLimitError | null;
  /** Which budget refused it. */
  refusedBy: { scope: 'key' | 'account'; budget: 'requests' | 'tokens' } | null;
}

interface Scope {
  name: 'key' | 'account';
  id: string;
  limits: MinuteLimits;
}

const WINDOW_MS = 60_000;
const NO_OVERRIDE: MinuteLimits = { requestsPerMinute: 0, tokensPerMinute: 0 };

/**
 * Requests and tokens per minute per API key and per account, in fixed one-minute windows kept in
 * `WindowCounters` (the store in the distributed mode, so the limits hold across edge instances).
 *
 * Requests are counted when admitted (a refused request counts too, so hammering does not help). Tokens are
 * counted when a call's usage event reaches the edge, in the minute the call ended: a call is admitted while
 * its scope's tokens of the current minute are below the limit, so calls running at once may together pass it
 * by their own usage, and a long call's tokens all count in the minute it ended.
 */
export class RateLimiter {
  constructor(
    private readonly counters: WindowCounters,
    private readonly settings: RateLimitSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts one request of `identity` and says whether it is admitted; `metered`: the route spends tokens.
   * `keyLimits`: the key's own limits (0: the configured default). A request no limit applies to writes nothing.
   */
  async admit(identity: Identity, metered: boolean, keyLimits: MinuteLimits = NO_OVERRIDE): Promise<Admission> {
    const now = this.now();
    const windowStart = now - (now % WINDOW_MS);
    const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000));
    const scopes = this.scopesOf(identity, keyLimits).filter((s) => s.limits.requestsPerMinute > 0 || (metered && s.limits.tokensPerMinute > 0));
    const totals = await Promise.all(scopes.map((s) =>
      this.counters.add(s.id, windowStart, WINDOW_MS, { requests: s.limits.requestsPerMinute > 0 ? 1 : 0, tokens: 0 })));

    const headers: Record<string, string> = {};
    let refusal: RateLimitError | null = null;
    let refusedBy: Admission['refusedBy'] = null;
    for (const kind of ['requests', 'tokens'] as const) {
      const perMinute = kind === 'requests' ? 'requestsPerMinute' : 'tokensPerMinute';
      let tightest: { limit: number; remaining: number } | null = null;
      for (const [i, scope] of scopes.entries()) {
        const limit = scope.limits[perMinute];
        if (limit === 0 || (kind === 'tokens' && !metered)) continue;
        const used = totals[i]![kind];
        const remaining = Math.max(0, limit - used);
        if (!tightest || remaining < tightest.remaining) tightest = { limit, remaining };
        // A request is counted already, so its limit is passed only when the total exceeds it; tokens are
        // counted after the calls, so none may start once the minute's tokens reached the limit.
        const over = kind === 'requests' ? used > limit : used >= limit;
        if (over && !refusal) {
          refusal = new RateLimitError(
            `Rate limit reached: ${limit} ${kind} per minute for this ${scope.name}; retry in ${resetSeconds}s`, resetSeconds);
          refusedBy = { scope: scope.name, budget: kind };
        }
      }
      const t = tightest as { limit: number; remaining: number } | null;
      if (!t) continue;
      headers[`x-ratelimit-limit-${kind}`] = String(t.limit);
      headers[`x-ratelimit-remaining-${kind}`] = String(t.remaining);
      headers[`x-ratelimit-reset-${kind}`] = `${resetSeconds}s`;
    }
    return { headers, refusal, refusedBy };
  }

  /**
   * Adds a finished call's tokens to its key's and its account's minute in which it ended (`endedAtMs`); a
   * call that ended in a minute already over counts no more (a consumer catching up on old events). The key's
   * are always counted (the consumer cannot know whether the key has a token limit of its own); the account's
   * when an account limit is set.
   */
  async recordTokens(accountId: string, keyHash: string, tokens: number, endedAtMs = this.now()): Promise<void> {
    const windowStart = endedAtMs - (endedAtMs % WINDOW_MS);
    if (tokens <= 0 || windowStart + WINDOW_MS <= this.now()) return;
    const scopes = this.scopesOf({ accountId, keyHash }, { requestsPerMinute: 0, tokensPerMinute: 1 }).filter((s) => s.limits.tokensPerMinute > 0);
    await Promise.all(scopes.map((s) => this.counters.add(s.id, windowStart, WINDOW_MS, { requests: 0, tokens })));
  }

  /** Forgets windows that ended. */
  sweep(): Promise<void> {
    return this.counters.sweep(this.now());
  }

  private scopesOf(identity: Pick<Identity, 'accountId' | 'keyHash'>, keyLimits: MinuteLimits): Scope[] {
    const scopes: Scope[] = [{ name: 'account', id: `account:${identity.accountId}`, limits: this.settings.account }];
    const key: MinuteLimits = {
      requestsPerMinute: keyLimits.requestsPerMinute || this.settings.key.requestsPerMinute,
      tokensPerMinute: keyLimits.tokensPerMinute || this.settings.key.tokensPerMinute,
    };
    if (identity.keyHash) scopes.unshift({ name: 'key', id: `key:${identity.keyHash}`, limits: key });
    return scopes.filter((s) => s.limits.requestsPerMinute > 0 || s.limits.tokensPerMinute > 0);
  }
}
