import { isTerminalNativeBatchStatus, type NativeBatchLineResult, type NativeBatchState, type NativeBatchStatus } from '@gw/provider-spec';
import { checkUpstreamShape, parseUpstreamJson } from '../http/upstream-json';
import { openAIChatResponseSchema } from './openai-api';
import type { OpenAIBatch, OpenAIBatchResultLine } from './openai-batch-api';
import { openAIBatchResultLineSchema } from './openai-batch-api';
import { convertOpenAIChatResponse } from './convert-from-openai-chat';
import { convertOpenAIUsage } from './convert-openai-usage';
import { parseOpenAIError } from './openai-error';

const STATUS: Record<OpenAIBatch['status'], NativeBatchStatus> = {
  validating: 'in_progress',
  in_progress: 'in_progress',
  finalizing: 'in_progress',
  cancelling: 'cancelling',
  completed: 'completed',
  failed: 'failed',
  expired: 'expired',
  cancelled: 'cancelled',
};

export function convertOpenAIBatchState(batch: OpenAIBatch): NativeBatchState {
  const status = STATUS[batch.status];
  const counts = batch.request_counts;
  const firstError = batch.errors?.data?.[0];
  return {
    status,
    upstreamStatus: batch.status,
    counts: counts ? { total: counts.total, succeeded: counts.completed, failed: counts.failed } : null,
    hasResults: isTerminalNativeBatchStatus(status) && Boolean(batch.output_file_id || batch.error_file_id),
    error: status === 'failed'
      ? { code: firstError?.code ?? 'batch_failed', message: firstError?.message ?? 'The provider failed the batch' }
      : null,
  };
}

/**
 * One line of an output or error file. An answered line goes through the chat adapter's own mapper; a line
 * the file holds but we cannot read is an errored result, never dropped.
 */
export function convertOpenAIBatchResultLine(text: string): NativeBatchLineResult {
  const line = checkUpstreamShape(parseUpstreamJson(text, 'batch result line'), openAIBatchResultLineSchema, 'batch result line');
  const { response, error } = line;
  if (response && response.status_code >= 200 && response.status_code < 300) return answeredLine(line, response);
  if (response) {
    const detail = parseOpenAIError(response.body);
    return {
      custom_id: line.custom_id,
      outcome: 'errored',
      error: { code: detail.code ?? 'upstream_error', message: detail.message ?? `The provider answered HTTP ${response.status_code}`, upstreamStatus: response.status_code },
    };
  }
  const code = error?.code ?? 'upstream_error';
  const outcome = code === 'batch_expired' ? 'expired' : code === 'batch_cancelled' ? 'cancelled' : 'errored';
  return { custom_id: line.custom_id, outcome, error: { code, message: error?.message ?? 'The provider did not run this line' } };
}

function answeredLine(line: OpenAIBatchResultLine, response: NonNullable<OpenAIBatchResultLine['response']>): NativeBatchLineResult {
  const parsed = openAIChatResponseSchema.safeParse(response.body);
  if (!parsed.success) {
    return { custom_id: line.custom_id, outcome: 'errored', error: { code: 'upstream_malformed_response', message: 'The provider sent a malformed answer for this line', upstreamStatus: response.status_code } };
  }
  const usage = convertOpenAIUsage(parsed.data.usage, response.request_id ?? parsed.data.id);
  return { custom_id: line.custom_id, outcome: 'succeeded', completion: convertOpenAIChatResponse(parsed.data, usage), usage, providerResponseId: parsed.data.id };
}
