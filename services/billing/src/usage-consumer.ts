import { randomUUID } from 'node:crypto';
import type { Logger, Metrics } from '@gw/platform';
import { subscribeInBackground, type BackgroundSubscription, type BusMessage, type TypedBus } from '@gw/bus';
import type { Store } from '@gw/store';
import { TOPICS, type TopicMessages } from '@gw/proto';
import { accountsCollection, LIST_PRICE_FACTOR_PPM } from './accounts';
import { balanceChangedEvent, publishBalanceChanges } from './balance-events';
import { buildLedgerEntry, ledgerCollection, type LedgerEntry } from './ledger';
import { FinishedPostings } from './finished-postings';
import { keyHolderDocs, keyHoldersCollection } from './key-holders';
import { ledgerMediaCollection, ledgerMediaDocs } from './ledger-media';
import { applyPostings, type PostingResult } from './posting';
import type { PriceBook, PriceQuote } from '@gw/catalog';
import { usageEventSchema, type UsageEvent } from './usage-event';
import { ledgerStatsInput, recordUsageStats, usageStatsCollection } from './stats/usage-stats';

export const USAGE_CONSUMER_GROUP = 'billing-ledger';

/** Points between the batch's writes where tests inject a crash; production passes none. */
export interface UsageBatchFaults {
  afterLedgerInsert?(): void | Promise<void>;
  afterStatsRecord?(): void | Promise<void>;
  afterBalanceUpdate?(): void | Promise<void>;
}

export interface UsageConsumerDeps {
  store: Store;
  bus: TypedBus<TopicMessages>;
  priceBook: PriceBook;
  logger: Logger;
  now?: () => Date;
  faults?: UsageBatchFaults;
  /** Where the cost of the charges landed is counted (the service's /metrics). */
  metrics?: Metrics;
  /** Postings this process finished, shared with the statistics pruner (a fresh set when absent). */
  finishedPostings?: FinishedPostings;
}

/** A message that is not a UsageEvent, or one whose charge no amount can hold; kept (never silently dropped) for an operator, then skipped. */
interface RejectedUsageDoc {
  _id: string;
  value: string;
  problem: string;
  rejected_at_ms: number;
}

/**
 * The batch step of the usage consumer. Per batch: one bulk ledger insert (entries born `applying` under a
 * fresh posting id), one bulk insert of the postings' statistics (stats/usage-stats.ts), ONE guarded write
 * per account, one bulk "applied" mark, one publish. Every step is
 * safe to repeat, so a crash anywhere followed by redelivery lands each charge exactly once.
 */
export function createUsageBatchHandler(deps: UsageConsumerDeps): (messages: BusMessage<unknown>[]) => Promise<void> {
  const { store, bus, priceBook, logger, faults = {} } = deps;
  const now = deps.now ?? (() => new Date());
  const ledger = ledgerCollection(store);
  const media = ledgerMediaCollection(store);
  const keyHolders = keyHoldersCollection(store);
  const accounts = accountsCollection(store);
  const rejects = store.collection<RejectedUsageDoc>('usage_rejects');
  const stats = usageStatsCollection(store);
  const finishedPostings = deps.finishedPostings ?? new FinishedPostings();

  async function parse(messages: BusMessage<unknown>[]): Promise<UsageEvent[]> {
    const byRequest = new Map<string, UsageEvent>();
    const rejected: RejectedUsageDoc[] = [];
    for (const m of messages) {
      const parsed = usageEventSchema.safeParse(m.value);
      if (parsed.success) {
        if (!byRequest.has(parsed.data.request_id)) byRequest.set(parsed.data.request_id, parsed.data);
        continue;
      }
      const problem = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      logger.error({ topic: m.topic, partition: m.partition, offset: m.offset, problem }, 'malformed usage event set aside');
      rejected.push({ _id: `${m.topic}:${m.partition}:${m.offset}`, value: JSON.stringify(m.value), problem, rejected_at_ms: now().getTime() });
    }
    if (rejected.length > 0) await rejects.insertMany(rejected, { ignoreDuplicates: true });
    return [...byRequest.values()];
  }

  /**
   * The batch's entries in the ledger: those this delivery recorded (as built: a read right after the insert would
   * return them so) and, re-read, those an earlier delivery recorded first.
   */
  async function record(events: UsageEvent[], postingId: string): Promise<LedgerEntry[]> {
    const accountIds = [...new Set(events.map((e) => e.account_id))];
    const known = await accounts.find({ _id: { $in: accountIds } });
    const factorOf = new Map(known.map((a) => [a._id, a.price_factor_ppm]));
    const nowMs = now().getTime();
    const entries: LedgerEntry[] = [];
    const unpriceable: RejectedUsageDoc[] = [];
    for (const event of events) {
      const factor = factorOf.get(event.account_id) ?? LIST_PRICE_FACTOR_PPM;
      let quote: PriceQuote;
      try {
        // A line a provider's batch API ran (api_type `batch`) is priced at the deployment's batch price.
        quote = priceBook.quote(event.deployment, event.usage, factor, event.api_type === 'batch' ? 'batch' : 'standard');
      } catch (err) {
        // Usage no amount can hold (a provider reporting absurd counts): set aside like a malformed event, or the
        // batch would fail on every redelivery and stop billing for every account.
        if (!(err instanceof RangeError)) throw err;
        logger.error({ requestId: event.request_id, deployment: event.deployment, problem: err.message }, 'usage event whose charge is out of range set aside');
        unpriceable.push({ _id: `unpriceable:${event.request_id}`, value: JSON.stringify(event), problem: err.message, rejected_at_ms: nowMs });
        continue;
      }
      if (!quote.priced) {
        logger.error({ requestId: event.request_id, deployment: event.deployment, model: event.model }, 'usage for a deployment without a price; recorded unpriced');
      }
      entries.push(buildLedgerEntry(event, quote, factor, postingId, nowMs));
    }
    if (unpriceable.length > 0) await rejects.insertMany(unpriceable, { ignoreDuplicates: true });
    if (entries.length === 0) return [];
    const { duplicateIds } = await ledger.insertMany(entries, { ignoreDuplicates: true });
    // Every entry's, recorded now or by an earlier delivery that stopped before this write.
    const mediaRows = ledgerMediaDocs(entries);
    if (mediaRows.length > 0) await media.insertMany(mediaRows, { ignoreDuplicates: true });
    // Before any of this spend lands on an account, so every key with spend has its row; written for every batch
    // (a key lookup when it exists), so spend an older replica posted during a rolling upgrade gets its row too.
    const holderRows = keyHolderDocs(entries);
    if (holderRows.length > 0) await keyHolders.insertMany(holderRows, { ignoreDuplicates: true });
    if (duplicateIds.length === 0) return entries;
    const earlier = new Set(duplicateIds);
    return [...entries.filter((e) => !earlier.has(e._id)), ...await ledger.find({ _id: { $in: duplicateIds } })];
  }

  /** `claimed`: every entry of the postings still `applying`, including those the bus now delivers in another batch. */
  async function post(postingIds: string[], claimed: LedgerEntry[]): Promise<Map<string, PostingResult>> {
    const accountIds = [...new Set(claimed.map((e) => e.account_id))];
    const results = await Promise.all(
      accountIds.map(async (accountId) => {
        const entryIds = claimed.filter((e) => e.account_id === accountId).map((e) => e._id);
        return [accountId, await applyPostings({ accounts, ledger, accountId, postingIds, entryIds, finishedPostings, logger, now })] as const;
      }),
    );
    const posted = new Map(results);
    // Counted once: only entries whose charge this delivery's write landed.
    for (const e of claimed) {
      if (!posted.get(e.account_id)?.applied.includes(e.posting_id)) continue;
      deps.metrics?.cost.micros.inc({ model: e.model, provider: e.provider, kind: 'list' }, e.list_micros);
      deps.metrics?.cost.micros.inc({ model: e.model, provider: e.provider, kind: 'charged' }, e.charged_micros);
    }
    return posted;
  }

  async function publish(events: UsageEvent[], posted: Map<string, PostingResult>): Promise<void> {
    const keysByAccount = new Map<string, Set<string>>();
    for (const e of events) {
      const keys = keysByAccount.get(e.account_id) ?? new Set<string>();
      if (e.key_hash) keys.add(e.key_hash);
      keysByAccount.set(e.account_id, keys);
    }
    for (const [accountId, result] of posted) {
      const keys = keysByAccount.get(accountId) ?? new Set<string>();
      result.keys.forEach((k) => keys.add(k));
      keysByAccount.set(accountId, keys);
    }
    // A redelivery whose postings all landed still publishes: a lost publish is repaired, and the version lets caches ignore repeats.
    const unposted = [...keysByAccount.keys()].filter((id) => !posted.has(id));
    const reread = unposted.length > 0 ? await accounts.find({ _id: { $in: unposted } }) : [];
    const current = [...[...posted.values()].map((r) => r.account), ...reread];
    const at = now();
    await publishBalanceChanges(bus, current.map((a) => balanceChangedEvent(a, keysByAccount.get(a._id) ?? [], at)));
  }

  return async (messages) => {
    const events = await parse(messages);
    if (events.length === 0) return;
    // New entries are born claimed by this delivery's posting; entries already recorded keep theirs.
    const postingId = `posting-${randomUUID()}`;
    const recorded = await record(events, postingId);
    await faults.afterLedgerInsert?.();

    const open = recorded.filter((e) => e.state === 'applying');
    let posted = new Map<string, PostingResult>();
    if (open.length > 0) {
      const postingIds = [...new Set(open.map((e) => e.posting_id))];
      // A posting's entries are fixed once its delivery recorded them, and this delivery's own posting holds only
      // entries it just recorded, all in `open`. An older posting (a delivery that crashed before its entries were
      // marked) may also hold entries of events outside this batch: those are looked up by posting.
      const older = postingIds.filter((id) => id !== postingId);
      const claimed = older.length === 0 ? open : [
        ...open.filter((e) => e.posting_id === postingId),
        ...await ledger.find({ posting_id: { $in: older }, state: 'applying' }),
      ];
      // Before any entry is marked applied, so the statistics of a posting are always derived from all of it.
      await recordUsageStats(stats, claimed.map(ledgerStatsInput));
      await faults.afterStatsRecord?.();
      posted = await post(postingIds, claimed);
      await faults.afterBalanceUpdate?.();
      // Every claimed entry's posting has landed now. By id alone: one a concurrent delivery marked first only
      // gets a later applied_at_ms.
      await ledger.updateMany({ _id: { $in: claimed.map((e) => e._id) } }, { $set: { state: 'applied', applied_at_ms: now().getTime() } });
      finishedPostings.add(postingIds);
    }
    await publish(events, posted);
  };
}

/** Joins the ledger's consumer group in the background: billing serves its API meanwhile. */
export function startUsageConsumer(deps: UsageConsumerDeps & { maxBatch: number; fetchWaitMs: number }): BackgroundSubscription {
  return subscribeInBackground(deps.bus, {
    topics: [TOPICS.usage],
    group: USAGE_CONSUMER_GROUP,
    maxBatch: deps.maxBatch,
    fetchWaitMs: deps.fetchWaitMs,
    handleBatch: createUsageBatchHandler(deps),
  }, deps.logger);
}
