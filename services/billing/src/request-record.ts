import { microsToUsd } from '@gw/platform';
import type { LedgerEntry } from './ledger';

/** The billing lookup's record, modelled on OpenRouter's generation record (API-NOTES, Billing). */
export interface RequestRecord {
  request_id: string;
  id: string | null;
  created_at: string;
  model: string;
  provider_name: string;
  api_type: string;
  status: string;
  streamed: boolean;
  cancelled: boolean;
  usage: LedgerEntry['usage'];
  usage_estimated: boolean;
  list_cost: string;
  charged_cost: string;
  price_factor: string;
  latency_ms: number;
  generation_time_ms: number;
  finish_reason: string | null;
  key_hash: string;
  /** The trace id of the call's request, to find its logs and trace; null when it had none. */
  trace_id: string | null;
}

/** The factor is stored in parts per million; shown as a decimal with trailing zeros trimmed ("0.8", "1"). */
export function factorToDecimal(ppm: number): string {
  return microsToUsd(ppm).replace(/0+$/, '').replace(/\.$/, '');
}

export function requestRecord(entry: LedgerEntry): RequestRecord {
  return {
    request_id: entry._id,
    id: entry.provider_response_id || null,
    created_at: new Date(entry.created_at_ms).toISOString(),
    model: entry.model,
    provider_name: entry.provider,
    api_type: entry.api_type,
    status: entry.status,
    streamed: entry.streamed,
    cancelled: entry.cancelled,
    usage: entry.usage,
    // Entries recorded before the field existed hold no flag: their usage came from the provider.
    usage_estimated: entry.usage_estimated ?? false,
    list_cost: microsToUsd(entry.list_micros),
    charged_cost: microsToUsd(entry.charged_micros),
    price_factor: factorToDecimal(entry.price_factor_ppm),
    latency_ms: entry.latency_ms,
    generation_time_ms: entry.generation_time_ms,
    finish_reason: entry.finish_reason || null,
    key_hash: entry.key_hash,
    trace_id: entry.trace_id ?? null,
  };
}
