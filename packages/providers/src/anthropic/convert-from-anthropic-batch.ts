import type { NativeBatchLineResult, NativeBatchState, NativeBatchStatus } from '@gw/provider-spec';
import { checkUpstreamShape, parseUpstreamJson } from '../http/upstream-json';
import { anthropicMessageSchema } from './anthropic-api';
import { anthropicBatchResultLineSchema, type AnthropicBatchResultLine, type AnthropicMessageBatch } from './anthropic-batch-api';
import { STATUS_OF_ERROR_TYPE } from './anthropic-error';
import type { AnthropicReadHint } from './convert-to-anthropic-batch';
import { convertAnthropicUsage } from './convert-anthropic-usage';
import { convertAnthropicMessage } from './convert-from-anthropic-message';

/**
 * Anthropic says only `ended`: a batch whose cancel was asked for ended cancelled, one with expired lines
 * ended expired, any other completed.
 */
function endStatus(batch: AnthropicMessageBatch): NativeBatchStatus {
  if (batch.cancel_initiated_at) return 'cancelled';
  if (batch.request_counts.expired > 0) return 'expired';
  return 'completed';
}

export function convertAnthropicBatchState(batch: AnthropicMessageBatch): NativeBatchState {
  const c = batch.request_counts;
  const status: NativeBatchStatus =
    batch.processing_status === 'ended' ? endStatus(batch) : batch.processing_status === 'canceling' ? 'cancelling' : 'in_progress';
  return {
    status,
    upstreamStatus: batch.processing_status,
    counts: { total: c.processing + c.succeeded + c.errored + c.canceled + c.expired, succeeded: c.succeeded, failed: c.errored + c.canceled + c.expired },
    // The results are read from the batch's documented path under the configured base URL, never from a URL
    // an answer names; results_url only says that they are ready.
    hasResults: batch.processing_status === 'ended' && Boolean(batch.results_url),
    error: null,
  };
}

/** One line of the results file; a succeeded answer goes through the chat adapter's own mapper. */
export function convertAnthropicBatchResultLine(text: string, hints: Record<string, AnthropicReadHint>): NativeBatchLineResult {
  const line = checkUpstreamShape(parseUpstreamJson(text, 'batch result line'), anthropicBatchResultLineSchema, 'batch result line');
  const custom_id = line.custom_id;
  const result = line.result;
  switch (result.type) {
    case 'succeeded': {
      const parsed = anthropicMessageSchema.safeParse((result as { message: unknown }).message);
      if (!parsed.success) return { custom_id, outcome: 'errored', error: { code: 'upstream_malformed_response', message: 'The provider sent a malformed answer for this line' } };
      const usage = convertAnthropicUsage(parsed.data.usage, parsed.data.id);
      const hint = hints[custom_id] ?? { includeReasoning: false };
      return { custom_id, outcome: 'succeeded', completion: convertAnthropicMessage(parsed.data, usage, hint), usage, providerResponseId: parsed.data.id };
    }
    case 'errored':
      return { custom_id, outcome: 'errored', error: lineError(result as Extract<AnthropicBatchResultLine['result'], { type: 'errored' }>) };
    case 'canceled':
      return { custom_id, outcome: 'cancelled', error: { code: 'batch_cancelled', message: 'The line was not run: the batch was cancelled' } };
    default:
      return { custom_id, outcome: 'expired', error: { code: 'batch_expired', message: 'The line was not run before the batch expired' } };
  }
}

function lineError(result: Extract<AnthropicBatchResultLine['result'], { type: 'errored' }>) {
  const outer = result.error as { type?: string | null; message?: string | null; error?: { type?: string | null; message?: string | null } } | null | undefined;
  const inner = outer?.error ?? outer;
  const type = inner?.type ?? 'api_error';
  return { code: type, message: inner?.message ?? 'The provider failed this line', upstreamStatus: Object.hasOwn(STATUS_OF_ERROR_TYPE, type) ? STATUS_OF_ERROR_TYPE[type] : 500 };
}
