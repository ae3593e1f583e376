import type { UsageEvent } from '@gw/proto';
import type { OpenCallDoc } from './open-call-journal';

/**
 * Rough token counts for text streams whose provider never reported usage (the instance streaming them died).
 * About four characters per token is the usual rule of thumb for English text with the common tokenizers; the
 * billing record marks such usage as estimated.
 */
const CHARS_PER_TOKEN = 4;

export function estimatedTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * The usage event for an entry whose instance died: what the last checkpoint saw, marked as an estimate (measured
 * usage as it was checkpointed, else tokens estimated from the text).
 */
export function estimatedUsageEvent(doc: OpenCallDoc): UsageEvent {
  return {
    request_id: doc._id,
    account_id: doc.account_id,
    media_ids: doc.media_ids ?? [],
    key_hash: doc.key_hash,
    model: doc.model,
    provider: doc.provider,
    deployment: doc.deployment,
    api_type: doc.api_type,
    provider_response_id: doc.provider_response_id,
    served_model: doc.served_model,
    streamed: true,
    cancelled: false,
    finish_reason: '',
    status: 'failed',
    usage: doc.usage ?? estimatedTextUsage(doc),
    latency_ms: Math.max(0, doc.checkpoint_at_ms - doc.started_at_ms),
    generation_time_ms: Math.max(0, doc.checkpoint_at_ms - doc.sent_at_ms),
    created_at_ms: doc.started_at_ms,
    usage_estimated: true,
    hold_id: doc.hold_id ?? '',
    hold_micros: doc.hold_micros ?? 0,
    trace_id: doc.trace_id ?? '',
  };
}

function estimatedTextUsage(doc: OpenCallDoc): UsageEvent['usage'] {
  const completion = estimatedTokens(doc.output_chars);
  return { prompt_tokens: doc.prompt_tokens_estimate, completion_tokens: completion, total_tokens: doc.prompt_tokens_estimate + completion } as UsageEvent['usage'];
}
