import type { SimulatedAnswer } from './simulated-chat';

/** OpenAI Responses API bodies and stream events, in the shapes the real API sends. */

export interface ResponseCall {
  id: string;
  createdAt: number;
  /** The served snapshot, e.g. `gpt-4o-mini-2026-01-01`. */
  model: string;
  /** Id of the one output item (`msg_...` or `fc_...`). */
  itemId: string;
  /** The answer is a refusal content part instead of output text. */
  refusal: boolean;
}

type Body = Record<string, unknown>;
type Item = Record<string, unknown>;

const TOOL_ARGUMENT_FRAGMENT = 12;

export function responsesUsage(a: SimulatedAnswer) {
  return {
    input_tokens: a.promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: a.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: a.promptTokens + a.completionTokens,
  };
}

const text = (a: SimulatedAnswer) => a.words.join(' ');
const incomplete = (a: SimulatedAnswer) => a.finishReason === 'length';

function contentPart(call: ResponseCall, value: string) {
  return call.refusal ? { type: 'refusal', refusal: value } : { type: 'output_text', annotations: [], logprobs: [], text: value };
}

/** The output item, either finished or as first announced in a stream (empty, in progress). */
function outputItem(call: ResponseCall, a: SimulatedAnswer, done: boolean): Item {
  if (a.toolCall) {
    return { id: call.itemId, type: 'function_call', status: done ? 'completed' : 'in_progress', arguments: done ? a.toolCall.arguments : '', call_id: a.toolCall.id, name: a.toolCall.name };
  }
  const status = !done ? 'in_progress' : incomplete(a) ? 'incomplete' : 'completed';
  return { id: call.itemId, type: 'message', status, content: done ? [contentPart(call, text(a))] : [], role: 'assistant' };
}

/** The Response object: finished, or the in-progress snapshot a stream starts with. */
export function responseObject(call: ResponseCall, req: Body, a: SimulatedAnswer, done: boolean) {
  const reasoning = (req.reasoning ?? {}) as Body;
  const textOptions = (req.text ?? {}) as Body;
  const finished = done ? (incomplete(a) ? 'incomplete' : 'completed') : 'in_progress';
  return {
    id: call.id,
    object: 'response',
    created_at: call.createdAt,
    status: finished,
    background: false,
    error: null,
    incomplete_details: done && incomplete(a) ? { reason: 'max_output_tokens' } : null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    max_tool_calls: req.max_tool_calls ?? null,
    model: call.model,
    output: done ? [outputItem(call, a, true)] : [],
    ...(done ? { output_text: a.toolCall || call.refusal ? '' : text(a) } : {}),
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null,
    prompt: req.prompt ?? null,
    prompt_cache_key: req.prompt_cache_key ?? null,
    prompt_cache_retention: req.prompt_cache_retention ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    safety_identifier: req.safety_identifier ?? null,
    service_tier: done ? 'default' : (req.service_tier ?? 'auto'),
    store: req.store ?? true,
    temperature: req.temperature ?? 1,
    text: { format: textOptions.format ?? { type: 'text' }, verbosity: textOptions.verbosity ?? 'medium' },
    tool_choice: req.tool_choice ?? 'auto',
    tools: req.tools ?? [],
    top_logprobs: req.top_logprobs ?? 0,
    top_p: req.top_p ?? 1,
    truncation: req.truncation ?? 'disabled',
    usage: done ? responsesUsage(a) : null,
    user: req.user ?? null,
    metadata: req.metadata ?? {},
  };
}

/**
 * The stream, as `[event type, data]` pairs in order: created, in_progress, the item and its deltas, then
 * `response.completed` (or `response.incomplete` when the output was cut at `max_output_tokens`).
 */
export function responseEvents(call: ResponseCall, req: Body, a: SimulatedAnswer, obfuscate: boolean): Array<[string, string]> {
  const events: Array<[string, string]> = [];
  const emit = (type: string, fields: object) => events.push([type, JSON.stringify({ type, sequence_number: events.length, ...fields })]);
  const at = { item_id: call.itemId, output_index: 0 };
  const part = { ...at, content_index: 0 };
  const pad = obfuscate ? { obfuscation: 'sim0pad' } : {};

  emit('response.created', { response: responseObject(call, req, a, false) });
  emit('response.in_progress', { response: responseObject(call, req, a, false) });
  emit('response.output_item.added', { output_index: 0, item: outputItem(call, a, false) });
  if (a.toolCall) {
    const args = a.toolCall.arguments;
    for (let i = 0; i < args.length; i += TOOL_ARGUMENT_FRAGMENT) {
      emit('response.function_call_arguments.delta', { ...at, delta: args.slice(i, i + TOOL_ARGUMENT_FRAGMENT), ...pad });
    }
    emit('response.function_call_arguments.done', { ...at, name: a.toolCall.name, arguments: args });
  } else {
    const kind = call.refusal ? 'refusal' : 'output_text';
    emit('response.content_part.added', { ...part, part: contentPart(call, '') });
    a.words.forEach((word, i) => {
      const delta = i === 0 ? word : ` ${word}`;
      emit(`response.${kind}.delta`, call.refusal ? { ...part, delta } : { ...part, delta, logprobs: [], ...pad });
    });
    emit(`response.${kind}.done`, call.refusal ? { ...part, refusal: text(a) } : { ...part, text: text(a), logprobs: [] });
    emit('response.content_part.done', { ...part, part: contentPart(call, text(a)) });
  }
  emit('response.output_item.done', { output_index: 0, item: outputItem(call, a, true) });
  emit(incomplete(a) ? 'response.incomplete' : 'response.completed', { response: responseObject(call, req, a, true) });
  return events;
}
