import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { BusMessage } from '@gw/bus';
import type { Logger } from '@gw/platform';
import type { Collection, Store } from '@gw/store';
import { recordUsageStats, type PostedDoc, type StatsInput, type UsageStatsRow } from './usage-stats';
import type { FinishedPostings } from '../finished-postings';

/** The CallFailed message as it arrives on the bus (proto3 JSON: absent fields are their zero value). */
const text = z.string().nullish().transform((v) => v ?? '');
const flag = z.boolean().nullish().transform((v) => v ?? false);
const int = z.union([z.number(), z.string().regex(/^\d+$/)]).nullish().transform((v) => Number(v ?? 0)).pipe(z.number().int().min(0));
export const callFailedSchema = z.object({
  request_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'not a request id'),
  account_id: z.string().min(1),
  key_hash: text,
  model: text,
  provider: text,
  api_type: text,
  error_kind: text,
  status: int,
  client_error: flag,
  streamed: flag,
  latency_ms: int,
  created_at_ms: int,
});

/**
 * One failed call, kept so that statistics count it once: `_id` is its request id, so a redelivered or repeated
 * report (an async job's re-run failing again) adds nothing. Counted like the ledger: born `applying` under the
 * delivery's posting, its row increments guarded by that posting's mark, then marked `applied`.
 */
export interface FailedCallDoc extends PostedDoc {
  account_id: string;
  key_hash: string;
  model: string;
  provider: string;
  api_type: string;
  error_kind: string;
  status: number;
  client_error: boolean;
  streamed: boolean;
  latency_ms: number;
  created_at_ms: number;
  recorded_at_ms: number;
}

/** Applied failed calls are kept this long (a redelivery after that is long past), then dropped. */
export const FAILED_CALL_RETENTION_MS = 24 * 60 * 60_000;

export function failedCallsCollection(store: Store): Collection<FailedCallDoc> {
  return store.collection<FailedCallDoc>('failed_calls');
}

export async function ensureFailedCallIndexes(failed: Collection<FailedCallDoc>): Promise<void> {
  await failed.ensureIndex({ fields: { posting_id: 1, state: 1 } });
  await failed.ensureIndex({ fields: { state: 1, recorded_at_ms: 1 } });
}

function statsInput(d: FailedCallDoc): StatsInput {
  return {
    account_id: d.account_id, key_hash: d.key_hash, model: d.model, provider: d.provider, api_type: d.api_type, created_at_ms: d.created_at_ms,
    posting_id: d.posting_id, usage: {}, list_micros: 0, charged_micros: 0, latency_ms: null, generation_time_ms: 0, streamed: d.streamed,
    failure: { kind: d.error_kind || 'unknown', client: d.client_error },
  };
}

/**
 * The batch step of billing's failed-call consumer: per batch one bulk insert, one guarded increment per
 * statistics row, one bulk "applied" mark, never a write per call. Safe to repeat at every step.
 */
export function createFailedCallsHandler(deps: {
  store: Store; stats: Collection<UsageStatsRow>; logger: Logger; now?: () => Date;
  /** Postings this process finished, shared with the statistics pruner. */
  finishedPostings?: FinishedPostings;
}): (messages: BusMessage<unknown>[]) => Promise<void> {
  const failed = failedCallsCollection(deps.store);
  const now = deps.now ?? (() => new Date());
  return async (messages) => {
    const postingId = `failures-${randomUUID()}`;
    const nowMs = now().getTime();
    const docs = new Map<string, FailedCallDoc>();
    for (const m of messages) {
      const parsed = callFailedSchema.safeParse(m.value);
      if (!parsed.success) {
        deps.logger.error({ topic: m.topic, partition: m.partition, offset: m.offset, problem: parsed.error.issues[0]?.message }, 'malformed failed-call event skipped');
        continue;
      }
      const e = parsed.data;
      if (docs.has(e.request_id)) continue;
      docs.set(e.request_id, {
        _id: e.request_id, account_id: e.account_id, key_hash: e.key_hash, model: e.model, provider: e.provider, api_type: e.api_type,
        error_kind: e.error_kind, status: e.status, client_error: e.client_error, streamed: e.streamed, latency_ms: e.latency_ms,
        created_at_ms: e.created_at_ms || nowMs, recorded_at_ms: nowMs, posting_id: postingId, state: 'applying',
      });
    }
    if (docs.size === 0) return;
    await failed.insertMany([...docs.values()], { ignoreDuplicates: true });
    const open = await failed.find({ _id: { $in: [...docs.keys()] }, state: 'applying' });
    if (open.length === 0) return;
    const postingIds = [...new Set(open.map((d) => d.posting_id))];
    // Every doc of those postings, also those another delivery carried: a posting is always counted whole.
    const claimed = await failed.find({ posting_id: { $in: postingIds }, state: 'applying' });
    await recordUsageStats(deps.stats, claimed.map(statsInput));
    await failed.updateMany({ posting_id: { $in: postingIds }, state: 'applying' }, { $set: { state: 'applied' } });
    deps.finishedPostings?.add(postingIds);
  };
}

/** Drops applied failed calls past retention; their counts stay in the statistics rows. */
export async function sweepFailedCalls(failed: Collection<FailedCallDoc>, nowMs: number): Promise<number> {
  return failed.deleteMany({ state: 'applied', recorded_at_ms: { $lt: nowMs - FAILED_CALL_RETENTION_MS } });
}
