import { createHash } from 'node:crypto';
import type { Collection, Doc, Store } from '@gw/store';
import type { LedgerEntry } from '../ledger';
import { HistogramBuilder, type LatencyHistogram } from './latency-histogram';

export const MINUTE_MS = 60_000;

/** Token kinds counted, as the usage events name them. */
export const TOKEN_KINDS = ['prompt_tokens', 'completion_tokens', 'input_tokens', 'output_tokens', 'total_tokens'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** What a statistics row is keyed by, besides its minute and account. */
export interface StatsDimensions {
  key_hash: string;
  model: string;
  provider: string;
  api_type: string;
}

/**
 * One minute of one account's calls with the same dimensions, as recorded by ONE posting (the delivery that
 * recorded their ledger entries). `_id` is derived from the posting, the minute and the dimensions, so a
 * redelivery that re-derives the rows of a posting inserts nothing new: statistics count each call exactly
 * once, as the ledger does. The hour and day views are rolled up from these at query time.
 */
export interface UsageStatsRow extends Doc, StatsDimensions {
  account_id: string;
  minute_ms: number;
  posting_id: string;
  requests: number;
  errors: number;
  streamed: number;
  tokens: Record<TokenKind, number>;
  list_micros: number;
  charged_micros: number;
  latency_ms: LatencyHistogram;
  /** Streamed calls only: a unary call's first byte is its whole answer. */
  ttft_ms: LatencyHistogram;
}

export function usageStatsCollection(store: Store): Collection<UsageStatsRow> {
  return store.collection<UsageStatsRow>('usage_stats');
}

export async function ensureUsageStatsIndexes(stats: Collection<UsageStatsRow>): Promise<void> {
  await stats.ensureIndex({ fields: { account_id: 1, minute_ms: 1 } });
}

function rowId(postingId: string, minuteMs: number, accountId: string, dims: StatsDimensions): string {
  const digest = createHash('sha256').update(JSON.stringify([accountId, dims.key_hash, dims.model, dims.provider, dims.api_type])).digest('hex').slice(0, 32);
  return `${postingId}:${minuteMs}:${digest}`;
}

/** A failed call as the event reported it (`status` may say `unpriced`; the event's own status is kept in `call_status`). */
function isError(e: LedgerEntry): boolean {
  return (e.call_status || e.status) !== 'succeeded';
}

/** The rows of the given ledger entries, aggregated in memory by posting, minute, account and dimensions. */
export function statsRowsOf(entries: readonly LedgerEntry[]): UsageStatsRow[] {
  const rows = new Map<string, { row: UsageStatsRow; latency: HistogramBuilder; ttft: HistogramBuilder }>();
  for (const e of entries) {
    const minuteMs = Math.floor(e.created_at_ms / MINUTE_MS) * MINUTE_MS;
    const dims: StatsDimensions = { key_hash: e.key_hash, model: e.model, provider: e.provider, api_type: e.api_type };
    const id = rowId(e.posting_id, minuteMs, e.account_id, dims);
    let acc = rows.get(id);
    if (!acc) {
      acc = {
        row: {
          _id: id, account_id: e.account_id, minute_ms: minuteMs, posting_id: e.posting_id, ...dims,
          requests: 0, errors: 0, streamed: 0, tokens: Object.fromEntries(TOKEN_KINDS.map((k) => [k, 0])) as Record<TokenKind, number>,
          list_micros: 0, charged_micros: 0, latency_ms: [], ttft_ms: [],
        },
        latency: new HistogramBuilder(),
        ttft: new HistogramBuilder(),
      };
      rows.set(id, acc);
    }
    const { row } = acc;
    row.requests += 1;
    if (isError(e)) row.errors += 1;
    for (const kind of TOKEN_KINDS) {
      const n = e.usage[kind];
      if (typeof n === 'number') row.tokens[kind] += n;
    }
    row.list_micros += e.list_micros;
    row.charged_micros += e.charged_micros;
    acc.latency.add(e.latency_ms);
    if (e.streamed) {
      row.streamed += 1;
      acc.ttft.add(Math.max(0, e.latency_ms - e.generation_time_ms));
    }
  }
  return [...rows.values()].map(({ row, latency, ttft }) => ({ ...row, latency_ms: latency.toJSON(), ttft_ms: ttft.toJSON() }));
}

/**
 * Records the statistics of postings whose entries are all still `applying` (so the set is the posting's
 * whole set): one bulk insert, rows already written by an earlier delivery of the same posting skipped.
 */
export async function recordUsageStats(stats: Collection<UsageStatsRow>, entries: readonly LedgerEntry[]): Promise<void> {
  const rows = statsRowsOf(entries);
  if (rows.length > 0) await stats.insertMany(rows, { ignoreDuplicates: true });
}
