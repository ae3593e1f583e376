import type { ChatCompletionChunk, ChatCompletionDelta, ServerSentEvent, Usage } from '@gw/provider-spec';
import { unfinishedStreamError } from '../http/upstream-errors';
import {
  isInputJsonDelta,
  isTextBlock,
  isTextDelta,
  isThinkingDelta,
  isToolUseBlock,
  KNOWN_STREAM_EVENT_TYPES,
  type AnthropicStreamEvent,
} from './anthropic-api';
import { anthropicErrorDetail, mapAnthropicStreamError } from './anthropic-error';
import { parseAnthropicStreamEvent } from './anthropic-stream-event';
import { AnthropicStreamUsage } from './convert-anthropic-usage';
import { DEFAULT_REFUSAL, finishReason } from './convert-from-anthropic-message';
import type { AnthropicRequest } from './convert-to-anthropic-request';

/** Our delta plus the thinking text, which the spec's chat types do not name yet. */
export type ChatCompletionDeltaWithReasoning = ChatCompletionDelta & { reasoning?: string };

type StreamEventOf<T extends AnthropicStreamEvent['type']> = Extract<AnthropicStreamEvent, { type: T }>;

export interface StreamOptions extends Pick<AnthropicRequest, 'jsonToolName' | 'includeReasoning'> {
  callerWantsUsage: boolean;
  providerRequestId: string | undefined;
}

/**
 * Turns the events of one Anthropic message stream into OpenAI-style chunks: a role chunk on message_start,
 * content, reasoning and tool call deltas per content block, a finish chunk on message_delta and, when the
 * caller asked for usage, a usage-only chunk on message_stop. Usage is recorded either way.
 */
export class AnthropicChatStreamTranslator {
  private id = '';
  private model = '';
  private readonly created = Math.floor(Date.now() / 1000);
  private stopped = false;
  private readonly usageSeen = new AnthropicStreamUsage();
  /** Anthropic block index -> OpenAI tool call index (tool calls count from 0, blocks count every block). */
  private readonly toolIndexOfBlock = new Map<number, number>();
  private jsonBlock: number | undefined;
  /** In JSON mode, text is held back: it is either a refusal or stray words beside the JSON answer. */
  private heldText = '';

  constructor(private readonly opts: StreamOptions) {}

  /** The chunks to pass on for one event; none for events that carry nothing for the caller. */
  translate(sse: ServerSentEvent): ChatCompletionChunk[] {
    if (this.stopped) return [];
    const event = parseAnthropicStreamEvent(sse.data, KNOWN_STREAM_EVENT_TYPES);
    if (!event) return [];

    switch (event.type) {
      case 'message_start':
        this.id = event.message.id;
        this.model = event.message.model;
        this.usageSeen.add(event.message.usage);
        return [this.chunk({ role: 'assistant', content: '' })];
      case 'content_block_start':
        return this.blockStart(event);
      case 'content_block_delta':
        return this.blockDelta(event);
      case 'message_delta':
        this.usageSeen.add(event.usage);
        return event.delta.stop_reason ? [this.finish(event.delta.stop_reason)] : [];
      case 'message_stop':
        this.stopped = true;
        return this.opts.callerWantsUsage ? [{ ...this.chunk({}), choices: [], usage: this.usage() }] : [];
      case 'error':
        throw mapAnthropicStreamError(anthropicErrorDetail(event.error));
      default:
        return []; // ping, content_block_stop
    }
  }

  /** The provider's `message_stop` went by: nothing after it counts. */
  complete(): boolean {
    return this.stopped;
  }

  /** Called when the body ended: a stream cut off before message_stop is a failed call, not a short answer. */
  end(): void {
    if (!this.stopped) throw unfinishedStreamError();
  }

  usage(): Usage | null {
    return this.usageSeen.current(this.opts.providerRequestId ?? (this.id || undefined));
  }

  private blockStart(event: StreamEventOf<'content_block_start'>): ChatCompletionChunk[] {
    const block = event.content_block;
    if (isTextBlock(block)) return this.text(block.text);
    if (!isToolUseBlock(block)) return [];
    const { id, name } = block;
    if (name === this.opts.jsonToolName) {
      this.jsonBlock = event.index;
      return [];
    }
    const index = this.toolIndexOfBlock.size;
    this.toolIndexOfBlock.set(event.index, index);
    return [this.chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] })];
  }

  private blockDelta(event: StreamEventOf<'content_block_delta'>): ChatCompletionChunk[] {
    const delta = event.delta;
    if (isTextDelta(delta)) return this.text(delta.text);
    if (isThinkingDelta(delta)) return this.opts.includeReasoning && delta.thinking ? [this.chunk({ reasoning: delta.thinking })] : [];
    if (!isInputJsonDelta(delta) || delta.partial_json === '') return []; // signature_delta, citations_delta...
    const piece = delta.partial_json;
    if (event.index === this.jsonBlock) return [this.chunk({ content: piece })];
    // Input of a server tool (web search...) runs at the provider; only our callers' tools are passed on.
    const index = this.toolIndexOfBlock.get(event.index);
    return index === undefined ? [] : [this.chunk({ tool_calls: [{ index, function: { arguments: piece } }] })];
  }

  private text(text: string): ChatCompletionChunk[] {
    if (text === '') return [];
    if (this.opts.jsonToolName !== undefined) {
      this.heldText += text;
      return [];
    }
    return [this.chunk({ content: text })];
  }

  private finish(stopReason: string): ChatCompletionChunk {
    const delta: ChatCompletionDeltaWithReasoning = {};
    if (stopReason === 'refusal') delta.refusal = this.heldText || DEFAULT_REFUSAL;
    else if (this.heldText !== '' && this.jsonBlock === undefined) delta.content = this.heldText;
    return this.chunk(delta, finishReason(stopReason, this.jsonBlock !== undefined));
  }

  private chunk(delta: ChatCompletionDeltaWithReasoning, finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
    if (this.opts.callerWantsUsage) chunk.usage = null;
    return chunk;
  }
}
