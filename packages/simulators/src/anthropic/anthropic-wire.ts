import type { SimulatedMessage } from './simulated-message';

/** Anthropic Messages bodies, stream events and error bodies, in the shapes the real API sends. */

export interface MessageInfo {
  id: string;
  /** The served snapshot, e.g. `claude-sonnet-4-5-2026-01-01`. */
  model: string;
}

const SIGNATURE = 'EqQBCgIYAhIMc2ltdWxhdGVkLXNpZw==';
const INPUT_JSON_FRAGMENT = 12;

function usage(m: SimulatedMessage, outputTokens: number) {
  return {
    input_tokens: m.inputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

function contentBlocks(m: SimulatedMessage): object[] {
  const blocks: object[] = [];
  if (m.thinkingWords.length > 0) blocks.push({ type: 'thinking', thinking: m.thinkingWords.join(' '), signature: SIGNATURE });
  if (m.textWords.length > 0) blocks.push({ type: 'text', text: m.textWords.join(' ') });
  if (m.toolUse) blocks.push({ type: 'tool_use', id: m.toolUse.id, name: m.toolUse.name, input: m.toolUse.input });
  return blocks;
}

export function messageBody(info: MessageInfo, m: SimulatedMessage) {
  return {
    id: info.id,
    type: 'message',
    role: 'assistant',
    model: info.model,
    content: contentBlocks(m),
    stop_reason: m.stopReason,
    stop_sequence: m.stopSequence,
    usage: usage(m, m.outputTokens),
  };
}

type EventData = { type: string } & Record<string, unknown>;

export interface StreamEvent {
  event: string;
  data: EventData;
}

export function encodeEvent({ event, data }: StreamEvent): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The whole event sequence of one streamed message: message_start, then per block content_block_start,
 * deltas and content_block_stop (with a ping after the first block start), message_delta, message_stop.
 */
export function messageEvents(info: MessageInfo, m: SimulatedMessage): StreamEvent[] {
  const events: StreamEvent[] = [];
  const push = (data: EventData) => events.push({ event: data.type, data });
  push({
    type: 'message_start',
    message: { id: info.id, type: 'message', role: 'assistant', model: info.model, content: [], stop_reason: null, stop_sequence: null, usage: usage(m, 1) },
  });

  const blocks: Array<{ start: object; deltas: object[] }> = [];
  if (m.thinkingWords.length > 0) {
    blocks.push({
      start: { type: 'thinking', thinking: '', signature: '' },
      deltas: [...wordDeltas(m.thinkingWords).map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature: SIGNATURE }],
    });
  }
  if (m.textWords.length > 0) {
    blocks.push({ start: { type: 'text', text: '' }, deltas: wordDeltas(m.textWords).map((text) => ({ type: 'text_delta', text })) });
  }
  if (m.toolUse) {
    const json = JSON.stringify(m.toolUse.input);
    const pieces = [''];
    for (let i = 0; i < json.length; i += INPUT_JSON_FRAGMENT) pieces.push(json.slice(i, i + INPUT_JSON_FRAGMENT));
    blocks.push({
      start: { type: 'tool_use', id: m.toolUse.id, name: m.toolUse.name, input: {} },
      deltas: pieces.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    });
  }

  if (blocks.length === 0) push({ type: 'ping' });
  blocks.forEach((block, index) => {
    push({ type: 'content_block_start', index, content_block: block.start });
    if (index === 0) push({ type: 'ping' });
    for (const delta of block.deltas) push({ type: 'content_block_delta', index, delta });
    push({ type: 'content_block_stop', index });
  });
  push({
    type: 'message_delta',
    delta: { stop_reason: m.stopReason, stop_sequence: m.stopSequence },
    usage: usage(m, m.outputTokens),
  });
  push({ type: 'message_stop' });
  return events;
}

/** Word-by-word deltas that join back to the words separated by single spaces. */
function wordDeltas(words: string[]): string[] {
  return words.map((word, i) => (i === 0 ? word : ` ${word}`));
}

export function anthropicErrorBody(type: string, message: string, requestId: string) {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

/** The error Anthropic sends for a given status, used by the `sim-error-<status>` knob. */
export function simulatedErrorBody(status: number, model: string, requestId: string) {
  switch (status) {
    case 400:
      return anthropicErrorBody('invalid_request_error', 'messages.0.content: simulated invalid request', requestId);
    case 401:
      return anthropicErrorBody('authentication_error', 'invalid x-api-key', requestId);
    case 402:
      return anthropicErrorBody('billing_error', 'Your credit balance is too low to access the Anthropic API.', requestId);
    case 403:
      return anthropicErrorBody('permission_error', 'Your API key does not have permission to use the specified resource.', requestId);
    case 404:
      return anthropicErrorBody('not_found_error', `model: ${model}`, requestId);
    case 413:
      return anthropicErrorBody('request_too_large', 'Request exceeds the maximum allowed number of bytes.', requestId);
    case 429:
      return anthropicErrorBody('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.', requestId);
    case 504:
      return anthropicErrorBody('timeout_error', 'Request timed out.', requestId);
    case 529:
      return anthropicErrorBody('overloaded_error', 'Overloaded', requestId);
    default:
      return status >= 500
        ? anthropicErrorBody('api_error', 'Internal server error', requestId)
        : anthropicErrorBody('invalid_request_error', `Simulated error ${status}.`, requestId);
  }
}
