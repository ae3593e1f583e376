import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { subscribeInBackground, type BackgroundSubscription, type TypedBus } from '@gw/bus';
import type { Identity, Logger, Metrics } from '@gw/platform';
import { TOPICS, type TopicMessages } from '@gw/proto';
import type { Store } from '@gw/store';
import { RateLimiter, type MinuteLimits, type RateLimitSettings } from './rate-limiter';
import { MemoryWindowCounters, StoreWindowCounters } from './window-counters';

type UsageMessage = TopicMessages[typeof TOPICS.usage];

/** Counting takes a store round trip or two (milliseconds); far past that, the store is in trouble. */
const DEFAULT_ADMISSION_BUDGET_MS = 1_000;
/**
 * Tokens are known only once a call ended, so token limits always count after the fact; a batch of usage may
 * wait this long for others, so a busy gateway reads its usage a few times a second instead of once per call.
 */
const USAGE_FETCH_WAIT_MS = 50;

/** The admission, or a failure once `ms` have passed (a late count still lands: the request is counted, not refused). */
function withinBudget<T>(admission: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rate counters did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([admission, late]).finally(() => clearTimeout(timer));
}

const count = (v: unknown): number => {
  const n = Number(v ?? 0);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/** What the token limits count of one usage message; null for a message with no account (nothing to count against). */
export function countedCall(value: unknown): { accountId: string; keyHash: string; tokens: number; endedAtMs: number | undefined } | null {
  if (typeof value !== 'object' || value === null) return null;
  const event = value as { [K in keyof UsageMessage]?: unknown };
  if (typeof event.account_id !== 'string' || event.account_id === '') return null;
  const endedAt = count(event.created_at_ms) + count(event.latency_ms);
  return {
    accountId: event.account_id,
    keyHash: typeof event.key_hash === 'string' ? event.key_hash : '',
    tokens: tokensOf(event.usage),
    endedAtMs: endedAt > 0 ? endedAt : undefined,
  };
}

/** Tokens a call used: its total, else prompt + completion (or input + output) as the provider reported them. */
function tokensOf(usage: unknown): number {
  if (typeof usage !== 'object' || usage === null) return 0;
  const u = usage as Record<string, unknown>;
  return count(u.total_tokens) || count(u.prompt_tokens) + count(u.completion_tokens) || count(u.input_tokens) + count(u.output_tokens);
}

export interface EdgeRateLimits {
  /** Counts the request and sets the `x-ratelimit-*` headers; throws the 429 when a limit is reached. */
  enforce(res: ServerResponse, identity: Identity, metered: boolean, keyLimits: MinuteLimits): Promise<void>;
  /** The usage consumer (tokens). */
  usage: BackgroundSubscription;
  sweeper: { stop(): Promise<void> };
}

/**
 * The edge's rate limits. With a store (the distributed mode) the counters are shared by every edge instance
 * and one consumer group adds each call's tokens once; without one (a single edge) they live in memory.
 * When the counters cannot be reached, or do not answer within `admissionBudgetMs`, the request is admitted
 * (logged): limits protect capacity, the spend limits in billing still hold, and a hung counter store must not
 * hold every call at the edge for the store's own timeout.
 */
export function openEdgeRateLimits(
  settings: RateLimitSettings,
  deps: { bus: TypedBus<TopicMessages>; store: Store | undefined; logger: Logger; metrics: Metrics; admissionBudgetMs?: number },
): EdgeRateLimits {
  const { bus, store, logger, metrics } = deps;
  const admissionBudgetMs = deps.admissionBudgetMs ?? DEFAULT_ADMISSION_BUDGET_MS;
  const log = logger.child({ component: 'rate-limits' });
  const shared = store ? new StoreWindowCounters(store) : null;
  // The sweep's index; the edge serves without it (and without its store: requests are then admitted).
  shared?.init().catch((err: Error) => log.warn({ err: err.message }, 'could not index the rate windows'));
  const limiter = new RateLimiter(shared ?? new MemoryWindowCounters(), settings);

  // Runs whatever the defaults: any key may have a token limit of its own.
  const usage = subscribeInBackground(bus, {
    topics: [TOPICS.usage],
    // Shared counters: one group adds each call once, from the start of the topic the first time it exists (old
    // calls fall in minutes already over and count nothing). A single edge: its own group, from now on.
    group: store ? 'edge-rate-limits' : `edge-rate-limits-${randomUUID()}`,
    from: store ? 'earliest' : 'latest',
    ephemeral: !store,
    fetchWaitMs: USAGE_FETCH_WAIT_MS,
    // A message it cannot read is skipped, never thrown on: the batch would be redelivered forever and no later
    // call's tokens counted. Billing keeps such events aside (usage_rejects); here they count nothing.
    handleBatch: async (messages) => {
      let unreadable = 0;
      for (const m of messages) {
        const call = countedCall(m.value);
        if (call) await limiter.recordTokens(call.accountId, call.keyHash, call.tokens, call.endedAtMs);
        else unreadable++;
      }
      if (unreadable > 0) log.warn({ unreadable, topic: TOPICS.usage }, 'usage messages without an account were not counted');
    },
  }, logger);

  const timer = setInterval(() => { limiter.sweep().catch((err: Error) => log.warn({ err: err.message }, 'sweeping rate windows failed')); }, 60_000);
  timer.unref();

  return {
    usage,
    sweeper: { stop: async () => clearInterval(timer) },
    async enforce(res, identity, metered, keyLimits) {
      let admission;
      try {
        admission = await withinBudget(limiter.admit(identity, metered, keyLimits), admissionBudgetMs);
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'rate counters unreachable; request admitted');
        return;
      }
      for (const [name, value] of Object.entries(admission.headers)) res.setHeader(name, value);
      if (admission.refusedBy) metrics.edge.rateLimited.inc(admission.refusedBy);
      if (admission.refusal) throw admission.refusal;
    },
  };
}
