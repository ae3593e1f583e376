import { hash as digestOf } from 'node:crypto';
import type { Collection, Doc, Store } from '@gw/store';
import type { LedgerEntry } from '../ledger';

/** Rows one prune pass looks at. */
const PRUNE_PAGE = 200;
import { HistogramBuilder, type LatencyHistogram } from './latency-histogram';
import type { FinishedPostings } from '../finished-postings';

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
 * One counted call as the statistics see it: a ledger entry (a billed call) or a failed call without usage.
 * `failure` is absent for a call that succeeded.
 */
export interface StatsInput extends StatsDimensions {
  account_id: string;
  created_at_ms: number;
  /** The delivery that counts it (see UsageStatsRow.postings). */
  posting_id: string;
  usage: Partial<Record<string, number | string>>;
  list_micros: number;
  charged_micros: number;
  /** Null: not measured (a call that failed before an answer adds no latency). */
  latency_ms: number | null;
  generation_time_ms: number;
  streamed: boolean;
  failure?: { kind: string; client: boolean };
}

/** The figures of a row that calls add to. */
interface Counts {
  /** Every counted call: billed ones and failed ones. */
  requests: number;
  /** Failed calls that were not the caller's doing (provider and gateway failures, streams broken midway). */
  errors: number;
  /** Refusals the caller can fix (spend refused, a request the provider refused as invalid). */
  client_errors: number;
  /** errors and client_errors by their kind (the error code). */
  error_kinds: Record<string, number>;
  streamed: number;
  tokens: Record<TokenKind, number>;
  list_micros: number;
  charged_micros: number;
  latency_ms: LatencyHistogram;
  /** Streamed calls only: a unary call's first byte is its whole answer. */
  ttft_ms: LatencyHistogram;
}

/**
 * One minute of one account's calls with the same dimensions. The hour and day views are rolled up from
 * these at query time. `postings` names the postings (deliveries that recorded ledger entries) already
 * counted: a posting's counts and its mark land in ONE guarded single-document write, so a redelivery that
 * re-derives a posting's counts from the ledger adds nothing, and statistics count each call exactly once,
 * as the ledger does.
 */
export interface UsageStatsRow extends Doc, StatsDimensions, Counts {
  account_id: string;
  minute_ms: number;
  postings: Record<string, true>;
  /** How many marks `postings` holds; present while there is one to prune (see pruneCountedPostings). */
  marks: number;
  has_marks?: true;
}

/** A document counted under a posting: a ledger entry or a failed call. */
export interface PostedDoc extends Doc {
  posting_id: string;
  state: 'applying' | 'applied';
}

export function usageStatsCollection(store: Store): Collection<UsageStatsRow> {
  return store.collection<UsageStatsRow>('usage_stats');
}

export async function ensureUsageStatsIndexes(stats: Collection<UsageStatsRow>): Promise<void> {
  await stats.ensureIndex({ fields: { account_id: 1, minute_ms: 1 } });
  await stats.ensureIndex({ fields: { has_marks: 1, minute_ms: 1 } });
}

function rowId(minuteMs: number, accountId: string, dims: StatsDimensions): string {
  const digest = digestOf('sha256', JSON.stringify([accountId, dims.key_hash, dims.model, dims.provider, dims.api_type])).slice(0, 32);
  return `${minuteMs}:${digest}`;
}

/** Kinds are field names in a row: anything but a plain code is counted as `other`. */
const KIND = /^[a-z0-9_]{1,64}$/;
/** The kind of a billed call that failed: a stream that broke after its first byte. */
export const STREAM_INTERRUPTED = 'stream_interrupted';

/**
 * A billed call as the statistics count it. A failed one (`status` may say `unpriced`; the event's own status
 * is kept in `call_status`) is a stream that broke midway: billed for what it delivered, and an error.
 */
export function ledgerStatsInput(e: LedgerEntry): StatsInput {
  const failed = (e.call_status || e.status) !== 'succeeded';
  return {
    account_id: e.account_id, key_hash: e.key_hash, model: e.model, provider: e.provider, api_type: e.api_type, created_at_ms: e.created_at_ms,
    posting_id: e.posting_id, usage: e.usage, list_micros: e.list_micros, charged_micros: e.charged_micros, latency_ms: e.latency_ms,
    generation_time_ms: e.generation_time_ms, streamed: e.streamed, ...(failed ? { failure: { kind: e.streamed ? STREAM_INTERRUPTED : 'failed', client: false } } : {}),
  };
}

const zeroCounts = (): Counts => ({
  requests: 0, errors: 0, client_errors: 0, error_kinds: {}, streamed: 0, tokens: Object.fromEntries(TOKEN_KINDS.map((k) => [k, 0])) as Record<TokenKind, number>,
  list_micros: 0, charged_micros: 0, latency_ms: {}, ttft_ms: {},
});

export interface PostingCounts {
  row: Omit<UsageStatsRow, keyof Counts | 'postings' | 'marks' | 'has_marks'>;
  postingId: string;
  counts: Counts;
}

/** The entries' figures, aggregated in memory by posting, minute, account and dimensions. */
export function postingCountsOf(entries: readonly StatsInput[]): PostingCounts[] {
  const groups = new Map<string, { row: PostingCounts['row']; postingId: string; counts: Counts; latency: HistogramBuilder; ttft: HistogramBuilder }>();
  for (const e of entries) {
    const minuteMs = Math.floor(e.created_at_ms / MINUTE_MS) * MINUTE_MS;
    const dims: StatsDimensions = { key_hash: e.key_hash, model: e.model, provider: e.provider, api_type: e.api_type };
    const id = rowId(minuteMs, e.account_id, dims);
    const groupKey = `${id}|${e.posting_id}`;
    let g = groups.get(groupKey);
    if (!g) {
      g = { row: { _id: id, account_id: e.account_id, minute_ms: minuteMs, ...dims }, postingId: e.posting_id, counts: zeroCounts(), latency: new HistogramBuilder(), ttft: new HistogramBuilder() };
      groups.set(groupKey, g);
    }
    const c = g.counts;
    c.requests += 1;
    if (e.failure) {
      if (e.failure.client) c.client_errors += 1;
      else c.errors += 1;
      const kind = KIND.test(e.failure.kind) ? e.failure.kind : 'other';
      c.error_kinds[kind] = (c.error_kinds[kind] ?? 0) + 1;
    }
    for (const kind of TOKEN_KINDS) {
      const n = e.usage[kind];
      if (typeof n === 'number') c.tokens[kind] += n;
    }
    c.list_micros += e.list_micros;
    c.charged_micros += e.charged_micros;
    if (e.streamed) c.streamed += 1;
    // A call that failed before an answer has no latency to add.
    if (e.latency_ms === null) continue;
    g.latency.add(e.latency_ms);
    if (e.streamed) g.ttft.add(Math.max(0, e.latency_ms - e.generation_time_ms));
  }
  return [...groups.values()].map(({ row, postingId, counts, latency, ttft }) => ({ row, postingId, counts: { ...counts, latency_ms: latency.toJSON(), ttft_ms: ttft.toJSON() } }));
}

function increments(c: Counts): Record<string, number> {
  const inc: Record<string, number> = {
    requests: c.requests, errors: c.errors, client_errors: c.client_errors, streamed: c.streamed, list_micros: c.list_micros, charged_micros: c.charged_micros,
  };
  for (const [k, n] of Object.entries(c.error_kinds)) inc[`error_kinds.${k}`] = n;
  for (const k of TOKEN_KINDS) if (c.tokens[k] !== 0) inc[`tokens.${k}`] = c.tokens[k];
  for (const [b, n] of Object.entries(c.latency_ms)) inc[`latency_ms.${b}`] = n;
  for (const [b, n] of Object.entries(c.ttft_ms)) inc[`ttft_ms.${b}`] = n;
  return inc;
}

/**
 * Adds the postings' figures to their minute rows: one bulk insert of the rows not there yet, then per row
 * and posting one guarded increment (skipped when the row already counts that posting). Called with every
 * entry of the postings while all are still `applying`, so a posting is always counted whole.
 */
export async function recordUsageStats(stats: Collection<UsageStatsRow>, entries: readonly StatsInput[]): Promise<void> {
  const groups = postingCountsOf(entries);
  if (groups.length === 0) return;
  const fresh = new Map(groups.map((g) => [g.row._id, { ...g.row, ...zeroCounts(), postings: {}, marks: 0 } as UsageStatsRow]));
  await stats.insertMany([...fresh.values()], { ignoreDuplicates: true });
  await Promise.all(groups.map((g) => stats.updateOne(
    { _id: g.row._id, [`postings.${g.postingId}`]: { $exists: false } },
    { $inc: { ...increments(g.counts), marks: 1 }, $set: { [`postings.${g.postingId}`]: true, has_marks: true } },
  )));
}

/**
 * Keeps rows small: drops the marks of postings whose entries are all applied, since only a posting with
 * entries still `applying` is ever re-derived (a mark is written after its posting's insert and before its
 * applied mark, so this never races a redelivery). `sources` are where postings' entries live (the ledger,
 * the failed calls). Looks at rows that hold marks, the current minute's too; the write requires the mark
 * count as read, so a posting counted meanwhile is kept (and the row is pruned on a later pass).
 */
export async function pruneCountedPostings(stats: Collection<UsageStatsRow>, sources: readonly Collection<PostedDoc>[],
  finished?: FinishedPostings): Promise<number> {
  const rows = await stats.find({ has_marks: true }, { sort: { minute_ms: 1 }, limit: PRUNE_PAGE });
  let pruned = 0;
  for (const row of rows) {
    const marks = Object.keys(row.postings ?? {});
    const open = new Set<string>();
    // Postings this process finished need no lookup (a row holds a mark per posting of its minute: thousands).
    const unknown = finished ? marks.filter((m) => !finished.has(m)) : marks;
    if (unknown.length > 0) {
      for (const source of sources) for (const e of await source.find({ posting_id: { $in: unknown }, state: 'applying' })) open.add(e.posting_id);
    }
    const closed = marks.filter((m) => !open.has(m));
    if (closed.length === 0 && open.size > 0) continue;
    const $unset: Record<string, true> = Object.fromEntries(closed.map((m) => [`postings.${m}`, true]));
    if (open.size === 0) $unset.has_marks = true;
    const res = await stats.updateOne({ _id: row._id, marks: row.marks }, { $unset, $set: { marks: open.size } });
    pruned += res.matched;
  }
  return pruned;
}
