import type { ChatCompletionChunk, NativeEvent } from '@gw/provider-spec';

/*
 * Text sizes the open-call journal (@gw/billed-call) turns into estimated tokens for a stream whose instance died.
 */

/** Inline file and image data are not text the model reads as tokens of that size; they are left out. */
const isInlineData = (s: string) => s.startsWith('data:') || s.startsWith('http://') || s.startsWith('https://');

/** Characters of text in a prompt (any JSON): every string, walked without recursion, inline data excluded. */
export function promptChars(value: unknown): number {
  let chars = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const v = pending.pop();
    if (typeof v === 'string') chars += isInlineData(v) ? 0 : v.length;
    else if (Array.isArray(v)) pending.push(...v);
    else if (v !== null && typeof v === 'object') pending.push(...Object.values(v));
  }
  return chars;
}

const textLength = (s: string | null | undefined) => (typeof s === 'string' ? s.length : 0);

/** Generated characters in one chat chunk: content, refusal, reasoning and tool-call arguments. */
export function chatChunkChars(chunk: ChatCompletionChunk): number {
  let chars = 0;
  for (const { delta } of chunk.choices) {
    chars += textLength(delta.content) + textLength(delta.refusal) + textLength(delta.reasoning);
    for (const call of delta.tool_calls ?? []) chars += textLength(call.function?.arguments);
  }
  return chars;
}

/**
 * Generated characters in one native event: the `delta` of Responses events (text, arguments, reasoning) and
 * the text, thinking and partial JSON of Messages `content_block_delta` events. Anything else generates nothing.
 */
export function nativeEventChars(event: NativeEvent): number {
  if (!event.data.includes('"delta"')) return 0;
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    return 0;
  }
  const delta = (data as { delta?: unknown } | null)?.delta;
  if (typeof delta === 'string') return delta.length;
  if (delta === null || typeof delta !== 'object') return 0;
  const d = delta as Record<string, unknown>;
  let chars = 0;
  for (const field of ['text', 'thinking', 'partial_json']) if (typeof d[field] === 'string') chars += (d[field] as string).length;
  return chars;
}
