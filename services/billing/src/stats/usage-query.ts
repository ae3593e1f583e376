import { InputError, microsToUsd, parseTimestamp } from '@gw/platform';
import type { Collection } from '@gw/store';
import { HistogramBuilder } from './latency-histogram';
import { MINUTE_MS, TOKEN_KINDS, type StatsDimensions, type TokenKind, type UsageStatsRow } from './usage-stats';

export type UsageInterval = 'minute' | 'hour' | 'day';

const INTERVAL_MS: Record<UsageInterval, number> = { minute: MINUTE_MS, hour: 60 * MINUTE_MS, day: 24 * 60 * MINUTE_MS };
/** The longest range one query may cover, per interval (at most 1,440 minutes, 744 hours, 366 days). */
const MAX_RANGE_MS: Record<UsageInterval, number> = { minute: INTERVAL_MS.day, hour: 31 * INTERVAL_MS.day, day: 366 * INTERVAL_MS.day };
/** The range when `from` is not given: the interval's natural window ending at `to`. */
const DEFAULT_RANGE_MS: Record<UsageInterval, number> = { minute: INTERVAL_MS.hour, hour: INTERVAL_MS.day, day: 30 * INTERVAL_MS.day };
/** Rows one answer may hold; more means a narrower range or fewer groupings. */
export const MAX_USAGE_ROWS = 10_000;

/** `group_by` names and the dimension each one splits by. */
const GROUPINGS = { model: 'model', key: 'key_hash', provider: 'provider', api_type: 'api_type' } as const satisfies Record<string, keyof StatsDimensions>;
type Grouping = keyof typeof GROUPINGS;

export interface UsageQuery {
  fromMs: number;
  toMs: number;
  interval: UsageInterval;
  groupBy: Grouping[];
}

export interface UsageRow extends Partial<StatsDimensions>, Record<TokenKind, number> {
  start: string;
  end: string;
  /** Every counted call: billed ones and those that failed without usage. */
  requests: number;
  /** Failed calls that were not the caller's doing (provider, gateway, streams broken midway). */
  errors: number;
  /** Refusals the caller can fix (spend refused, a request refused as invalid). */
  client_errors: number;
  /** errors and client_errors by kind (the error code, or `stream_interrupted`). */
  error_kinds: Record<string, number>;
  streamed_requests: number;
  list_cost: string;
  charged_cost: string;
  latency_ms_p50: number | null;
  latency_ms_p95: number | null;
  /** Streamed calls only; null when the row has none. */
  ttft_ms_p50: number | null;
  ttft_ms_p95: number | null;
}

function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new InputError(`${name} must be given once`, name);
  return v;
}

/** Unix seconds or an ISO 8601 date-time with a zone (or a date, midnight UTC). */
function instant(query: Record<string, unknown>, name: string): number | undefined {
  const v = single(query, name);
  if (v === undefined) return undefined;
  const ms = /^\d{1,12}$/.test(v) ? Number(v) * 1000 : parseTimestamp(v);
  if (ms === null) throw new InputError(`${name} must be unix seconds or an ISO 8601 date-time with a time zone`, name);
  return ms;
}

/** Parses and bounds the query string; `from` rounds down and `to` up to whole intervals (UTC). */
export function parseUsageQuery(query: Record<string, unknown>, nowMs: number): UsageQuery {
  const intervalText = single(query, 'interval') ?? 'hour';
  if (!Object.hasOwn(INTERVAL_MS, intervalText)) throw new InputError('interval must be one of minute, hour, day', 'interval');
  const interval = intervalText as UsageInterval;
  const step = INTERVAL_MS[interval];
  const to = instant(query, 'to') ?? nowMs;
  const from = instant(query, 'from') ?? to - DEFAULT_RANGE_MS[interval];
  const fromMs = Math.floor(from / step) * step;
  const toMs = Math.ceil(to / step) * step;
  if (toMs <= fromMs || to <= from) throw new InputError('from must be before to', 'from');
  if (toMs - fromMs > MAX_RANGE_MS[interval]) {
    throw new InputError(`A ${interval} query covers at most ${MAX_RANGE_MS[interval] / step} ${interval}s; narrow from and to`, 'from');
  }
  const groupText = single(query, 'group_by') ?? '';
  const names = groupText === '' ? [] : groupText.split(',').map((s) => s.trim());
  for (const n of names) {
    if (!Object.hasOwn(GROUPINGS, n)) throw new InputError(`group_by takes a comma-separated list of ${Object.keys(GROUPINGS).join(', ')}`, 'group_by');
  }
  return { fromMs, toMs, interval, groupBy: [...new Set(names)] as Grouping[] };
}

interface Accumulator {
  row: Omit<UsageRow, 'list_cost' | 'charged_cost' | 'latency_ms_p50' | 'latency_ms_p95' | 'ttft_ms_p50' | 'ttft_ms_p95'>;
  startMs: number;
  listMicros: number;
  chargedMicros: number;
  latency: HistogramBuilder;
  ttft: HistogramBuilder;
}

/** The account's statistics in the range, rolled up from minute rows into the interval and groupings asked for. */
export async function queryUsage(stats: Collection<UsageStatsRow>, accountId: string, q: UsageQuery): Promise<UsageRow[]> {
  const rows = await stats.find({ account_id: accountId, minute_ms: { $gte: q.fromMs, $lt: q.toMs } });
  const step = INTERVAL_MS[q.interval];
  const groups = new Map<string, Accumulator>();
  for (const r of rows) {
    const startMs = Math.floor(r.minute_ms / step) * step;
    const dims: Partial<StatsDimensions> = {};
    for (const g of q.groupBy) dims[GROUPINGS[g]] = r[GROUPINGS[g]];
    const id = JSON.stringify([startMs, ...q.groupBy.map((g) => r[GROUPINGS[g]])]);
    let acc = groups.get(id);
    if (!acc) {
      if (groups.size >= MAX_USAGE_ROWS) {
        throw new InputError(`The answer would hold more than ${MAX_USAGE_ROWS} rows; narrow from and to or group by less`, 'group_by');
      }
      acc = {
        row: {
          start: new Date(startMs).toISOString(), end: new Date(startMs + step).toISOString(), ...dims,
          requests: 0, errors: 0, client_errors: 0, error_kinds: {}, streamed_requests: 0, ...(Object.fromEntries(TOKEN_KINDS.map((k) => [k, 0])) as Record<TokenKind, number>),
        },
        startMs, listMicros: 0, chargedMicros: 0, latency: new HistogramBuilder(), ttft: new HistogramBuilder(),
      };
      groups.set(id, acc);
    }
    acc.row.requests += r.requests;
    acc.row.errors += r.errors;
    acc.row.client_errors += r.client_errors ?? 0;
    for (const [kind, n] of Object.entries(r.error_kinds ?? {})) acc.row.error_kinds[kind] = (acc.row.error_kinds[kind] ?? 0) + n;
    acc.row.streamed_requests += r.streamed;
    for (const k of TOKEN_KINDS) acc.row[k] += r.tokens[k] ?? 0;
    acc.listMicros += r.list_micros;
    acc.chargedMicros += r.charged_micros;
    acc.latency.merge(r.latency_ms);
    acc.ttft.merge(r.ttft_ms);
  }
  return [...groups.entries()]
    .sort(([a, x], [b, y]) => x.startMs - y.startMs || (a < b ? -1 : a > b ? 1 : 0))
    .map(([, acc]) => ({
      ...acc.row,
      list_cost: microsToUsd(acc.listMicros),
      charged_cost: microsToUsd(acc.chargedMicros),
      latency_ms_p50: acc.latency.quantile(0.5),
      latency_ms_p95: acc.latency.quantile(0.95),
      ttft_ms_p50: acc.ttft.quantile(0.5),
      ttft_ms_p95: acc.ttft.quantile(0.95),
    }));
}
