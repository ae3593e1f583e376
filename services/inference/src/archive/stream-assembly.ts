import type { ChatCompletionChunk, NativeApi, NativeEvent, Usage } from '@gw/provider-spec';

/**
 * Streams reassembled into the one object the non-streamed call would have answered, for the archive:
 * the chat chunks into a chat completion; a responses stream into the response its terminal event carries;
 * a messages stream into its message (content blocks rebuilt from their deltas).
 */
export interface StreamAssembler<E> {
  add(item: E): void;
  result(): unknown;
}

interface ChoiceState {
  index: number;
  role: string;
  content: string | null;
  reasoning: string | null;
  refusal: string | null;
  toolCalls: Map<number, { id?: string; type?: string; function: { name: string; arguments: string } }>;
  finishReason: string | null;
}

export class ChatStreamAssembler implements StreamAssembler<ChatCompletionChunk> {
  private head: Pick<ChatCompletionChunk, 'id' | 'created' | 'model'> | null = null;
  private readonly choices = new Map<number, ChoiceState>();
  private usage: Usage | null = null;

  add(chunk: ChatCompletionChunk): void {
    this.head ??= { id: chunk.id, created: chunk.created, model: chunk.model };
    if (chunk.usage) this.usage = chunk.usage;
    for (const c of chunk.choices) {
      let s = this.choices.get(c.index);
      if (!s) this.choices.set(c.index, (s = { index: c.index, role: 'assistant', content: null, reasoning: null, refusal: null, toolCalls: new Map(), finishReason: null }));
      const d = c.delta;
      if (d.content) s.content = (s.content ?? '') + d.content;
      if (d.reasoning) s.reasoning = (s.reasoning ?? '') + d.reasoning;
      if (d.refusal) s.refusal = (s.refusal ?? '') + d.refusal;
      for (const t of d.tool_calls ?? []) {
        const call = s.toolCalls.get(t.index) ?? { function: { name: '', arguments: '' } };
        if (t.id) call.id = t.id;
        if (t.type) call.type = t.type;
        call.function.name += t.function?.name ?? '';
        call.function.arguments += t.function?.arguments ?? '';
        s.toolCalls.set(t.index, call);
      }
      if (c.finish_reason) s.finishReason = c.finish_reason;
    }
  }

  result(): unknown {
    return {
      id: this.head?.id ?? '', object: 'chat.completion', created: this.head?.created ?? 0, model: this.head?.model ?? '',
      choices: [...this.choices.values()].sort((a, b) => a.index - b.index).map((s) => ({
        index: s.index,
        message: {
          role: s.role, content: s.content,
          ...(s.reasoning !== null ? { reasoning: s.reasoning } : {}),
          ...(s.refusal !== null ? { refusal: s.refusal } : {}),
          ...(s.toolCalls.size > 0 ? { tool_calls: [...s.toolCalls.entries()].sort((a, b) => a[0] - b[0]).map(([, t]) => t) } : {}),
        },
        finish_reason: s.finishReason,
      })),
      ...(this.usage ? { usage: this.usage } : {}),
    };
  }
}

type Json = Record<string, unknown>;

/** A provider's event data that is not JSON is skipped, not fatal: the archive keeps what it can read. */
function safeJsonParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The terminal event (`response.completed`, `.incomplete`, `.failed`) carries the whole response. */
class ResponsesStreamAssembler implements StreamAssembler<NativeEvent> {
  private final: unknown = null;
  private text = '';

  add(e: NativeEvent): void {
    const data = safeJsonParse(e.data);
    if (!isObject(data)) return;
    if (data.type === 'response.output_text.delta' && typeof data.delta === 'string') this.text += data.delta;
    if (typeof data.type === 'string' && /^response\.(completed|incomplete|failed)$/.test(data.type) && isObject(data.response)) this.final = data.response;
  }

  /** Without a terminal event (the stream was cut), the text generated so far. */
  result(): unknown {
    return this.final ?? { object: 'response', status: 'incomplete', output_text: this.text };
  }
}

class MessagesStreamAssembler implements StreamAssembler<NativeEvent> {
  private message: Json = { type: 'message', role: 'assistant', content: [] };
  private readonly blocks = new Map<number, Json>();

  add(e: NativeEvent): void {
    const data = safeJsonParse(e.data);
    if (!isObject(data)) return;
    const index = typeof data.index === 'number' ? data.index : -1;
    if (data.type === 'message_start' && isObject(data.message)) this.message = { ...data.message };
    else if (data.type === 'content_block_start' && isObject(data.content_block)) this.blocks.set(index, { ...data.content_block });
    else if (data.type === 'content_block_delta' && isObject(data.delta)) this.applyDelta(this.blocks.get(index), data.delta);
    else if (data.type === 'message_delta') {
      if (isObject(data.delta)) this.message = { ...this.message, ...data.delta };
      if (isObject(data.usage)) this.message.usage = { ...(isObject(this.message.usage) ? this.message.usage : {}), ...data.usage };
    }
  }

  private applyDelta(block: Json | undefined, delta: Json): void {
    if (!block) return;
    const append = (field: string, part: unknown) => { if (typeof part === 'string') block[field] = `${typeof block[field] === 'string' ? block[field] : ''}${part}`; };
    if (delta.type === 'text_delta') append('text', delta.text);
    else if (delta.type === 'thinking_delta') append('thinking', delta.thinking);
    else if (delta.type === 'signature_delta') append('signature', delta.signature);
    else if (delta.type === 'input_json_delta') append('partial_json', delta.partial_json);
  }

  result(): unknown {
    const content = [...this.blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => {
      if (typeof b.partial_json !== 'string') return b;
      const { partial_json: text, ...rest } = b;
      const input = safeJsonParse(text as string);
      return { ...rest, input: input === undefined ? text : input };
    });
    return { ...this.message, content };
  }
}

export function nativeStreamAssembler(api: NativeApi): StreamAssembler<NativeEvent> {
  return api === 'responses' ? new ResponsesStreamAssembler() : new MessagesStreamAssembler();
}

/** Passes every item through unchanged, showing it to `see` first (ending early ends the source too). */
export async function* tapped<T>(items: AsyncIterable<T>, see: (item: T) => void): AsyncGenerator<T> {
  for await (const item of items) {
    see(item);
    yield item;
  }
}
