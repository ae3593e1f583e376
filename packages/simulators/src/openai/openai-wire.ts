import type { SimulatedAnswer } from './simulated-chat';

/** OpenAI response, chunk and error bodies, in the shapes the real API sends. */

export const SYSTEM_FINGERPRINT = 'fp_sim0001';

export interface CallInfo {
  id: string;
  created: number;
  /** The served snapshot, e.g. `gpt-4o-mini-2026-01-01`. */
  model: string;
}

export function openAIUsage(a: SimulatedAnswer) {
  return {
    prompt_tokens: a.promptTokens,
    completion_tokens: a.completionTokens,
    total_tokens: a.promptTokens + a.completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

export function chatCompletionBody(call: CallInfo, a: SimulatedAnswer) {
  const toolCalls = a.toolCall
    ? [{ id: a.toolCall.id, type: 'function', function: { name: a.toolCall.name, arguments: a.toolCall.arguments } }]
    : undefined;
  return {
    id: call.id,
    object: 'chat.completion',
    created: call.created,
    model: call.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: a.toolCall ? null : a.words.join(' '),
          refusal: null,
          annotations: [],
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: a.finishReason,
      },
    ],
    usage: openAIUsage(a),
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}

const TOOL_ARGUMENT_FRAGMENT = 12;

/** The `data:` payloads of a stream, in order, without the final `[DONE]`. */
export function chatCompletionChunks(call: CallInfo, a: SimulatedAnswer, includeUsage: boolean): string[] {
  // With include_usage every chunk has a usage field: null but on the last, usage-only chunk.
  const envelope = (choices: object[], usage: object | null) =>
    JSON.stringify({
      id: call.id,
      object: 'chat.completion.chunk',
      created: call.created,
      model: call.model,
      service_tier: 'default',
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
      ...(includeUsage ? { usage } : {}),
    });
  const chunk = (delta: object, finishReason: string | null) => envelope([{ index: 0, delta, logprobs: null, finish_reason: finishReason }], null);

  const out: string[] = [];
  if (a.toolCall) {
    const { id, name, arguments: args } = a.toolCall;
    out.push(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }], refusal: null }, null));
    for (let i = 0; i < args.length; i += TOOL_ARGUMENT_FRAGMENT) {
      out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + TOOL_ARGUMENT_FRAGMENT) } }] }, null));
    }
  } else {
    out.push(chunk({ role: 'assistant', content: '', refusal: null }, null));
    a.words.forEach((word, i) => out.push(chunk({ content: i === 0 ? word : ` ${word}` }, null)));
  }
  out.push(chunk({}, a.finishReason));
  if (includeUsage) out.push(envelope([], openAIUsage(a)));
  return out;
}

export function openAIErrorBody(message: string, type: string, param: string | null, code: string | null) {
  return { error: { message, type, param, code } };
}

/** The error OpenAI sends for a given status, used by the `sim-error-<status>` knob. */
export function simulatedErrorBody(status: number, model: string) {
  switch (status) {
    case 400:
      return openAIErrorBody("Invalid value for 'messages': simulated invalid request.", 'invalid_request_error', 'messages', 'invalid_value');
    case 401:
      return openAIErrorBody('Incorrect API key provided: sk-sim***. You can find your API key at https://example.invalid/api-keys.', 'invalid_request_error', null, 'invalid_api_key');
    case 403:
      return openAIErrorBody('You are not allowed to sample from this model.', 'invalid_request_error', null, 'permission_denied');
    case 404:
      return openAIErrorBody(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', null, 'model_not_found');
    case 429:
      return openAIErrorBody('Rate limit reached for requests. Please try again in 1s.', 'requests', null, 'rate_limit_exceeded');
    default:
      return status >= 500
        ? openAIErrorBody('The server had an error while processing your request. Sorry about that!', 'server_error', null, null)
        : openAIErrorBody(`Simulated error ${status}.`, 'invalid_request_error', null, null);
  }
}
