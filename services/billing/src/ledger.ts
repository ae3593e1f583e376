import type { Collection, Doc, Store } from '@gw/store';
import type { PriceQuote } from '@gw/catalog';
import { requestIdOfMedia, type LedgerMediaDoc } from './ledger-media';
import { presentUsageFields, type Usage, type UsageEvent } from './usage-event';

/**
 * `applying`: recorded under a posting (`posting_id`, the delivery that first recorded it) whose balance
 * write may or may not have landed; the account's `landed_postings` says which. `applied`: done.
 *
 * Entries are born `applying` instead of being inserted `pending` and claimed under a posting id by a
 * second write: that write touched every entry again and cost more than the bulk insert itself.
 */
export type LedgerState = 'applying' | 'applied';

/** One billed call; `_id` is the platform request id, so a redelivered event cannot be recorded twice. */
export interface LedgerEntry extends Doc {
  account_id: string;
  key_hash: string;
  model: string;
  provider: string;
  deployment: string;
  api_type: string;
  provider_response_id: string;
  served_model: string;
  streamed: boolean;
  cancelled: boolean;
  finish_reason: string;
  /** The usage is the gateway's estimate (the service died before the provider reported it). */
  usage_estimated: boolean;
  /** The call's status (`succeeded`, `failed`), or `unpriced` when the deployment has no price. */
  status: string;
  /** The status the event reported, kept when `status` says `unpriced`. */
  call_status: string;
  usage: Partial<Record<keyof Usage, number | string>>;
  latency_ms: number;
  generation_time_ms: number;
  created_at_ms: number;
  list_micros: number;
  charged_micros: number;
  price_factor_ppm: number;
  state: LedgerState;
  /** The spend grant the call ran under and its share of it (absent: the call's hold, if any, is under `_id`). */
  hold_id?: string;
  hold_micros?: number;
  /** The gateway's ids of what the call produced (image record ids), each resolvable by the lookup. */
  media_ids?: string[];
  /** The W3C trace id of the request that made the call (absent when it had none). */
  trace_id?: string;
  posting_id: string;
  recorded_at_ms: number;
  applied_at_ms: number | null;
}

export const UNPRICED = 'unpriced';

export function ledgerCollection(store: Store): Collection<LedgerEntry> {
  return store.collection<LedgerEntry>('ledger');
}

export async function ensureLedgerIndexes(ledger: Collection<LedgerEntry>): Promise<void> {
  await ledger.ensureIndex({ fields: { provider_response_id: 1 } });
  // With the state, a posting's mark as applied is decided (and, on the embedded engine, done) in the index alone.
  await ledger.ensureIndex({ fields: { posting_id: 1, state: 1 } });
}

export function buildLedgerEntry(event: UsageEvent, quote: PriceQuote, priceFactorPpm: number, postingId: string, nowMs: number): LedgerEntry {
  return {
    _id: event.request_id,
    account_id: event.account_id,
    key_hash: event.key_hash,
    model: event.model,
    provider: event.provider,
    deployment: event.deployment,
    api_type: event.api_type,
    provider_response_id: event.provider_response_id,
    served_model: event.served_model,
    streamed: event.streamed,
    cancelled: event.cancelled,
    finish_reason: event.finish_reason,
    usage_estimated: event.usage_estimated,
    status: quote.priced ? event.status : UNPRICED,
    call_status: event.status,
    usage: presentUsageFields(event.usage),
    latency_ms: event.latency_ms,
    generation_time_ms: event.generation_time_ms,
    created_at_ms: event.created_at_ms || nowMs,
    list_micros: quote.listMicros,
    charged_micros: quote.chargedMicros,
    price_factor_ppm: priceFactorPpm,
    state: 'applying',
    ...(event.hold_id ? { hold_id: event.hold_id, hold_micros: event.hold_micros } : {}),
    ...(event.media_ids.length > 0 ? { media_ids: event.media_ids } : {}),
    ...(event.trace_id ? { trace_id: event.trace_id } : {}),
    posting_id: postingId,
    recorded_at_ms: nowMs,
    applied_at_ms: null,
  };
}

/**
 * The caller's own entry, by platform request id first, then by the provider-facing id, then by a media id of
 * the gateway's: each a read of an indexed key, so an unknown id costs three index probes, never a scan.
 */
export async function findAccountEntry(ledger: Collection<LedgerEntry>, media: Collection<LedgerMediaDoc>, accountId: string, id: string): Promise<LedgerEntry | null> {
  // Visible once its charge has landed on the balance: a caller who finds the record can rely on the balance.
  const applied = { account_id: accountId, state: 'applied' };
  const byRequestId = async (requestId: string | null) => (requestId === null ? null : ledger.findOne({ _id: requestId, ...applied }));
  return (await byRequestId(id)) ?? (await ledger.findOne({ provider_response_id: id, ...applied })) ?? (await byRequestId(await requestIdOfMedia(media, accountId, id)));
}
