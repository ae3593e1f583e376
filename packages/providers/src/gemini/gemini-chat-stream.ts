import { newId, UpstreamError } from '@gw/platform';
import {
  markRetryable,
  type ChatCompletionChunk,
  type ChatCompletionChunkChoice,
  type ChatCompletionDelta,
  type ServerSentEvent,
  type Usage,
} from '@gw/provider-spec';
import { unfinishedStreamError } from '../http/upstream-errors';
import { checkUpstreamShape, parseUpstreamJson } from '../http/upstream-json';
import { geminiResponseSchema, type GeminiCandidate, type GeminiUsageMetadata } from './gemini-api';
import { readCandidateParts } from './convert-from-gemini-response';
import { convertGeminiLogprobs } from './convert-gemini-logprobs';
import { convertGeminiUsage } from './convert-gemini-usage';
import { mapGeminiHttpError, parseGeminiError } from './gemini-error';
import { geminiRefusalText, isGeminiRefusal, mapGeminiFinishReason } from './map-gemini-finish-reason';

/** A delta that may carry the thought summary, as `reasoning` (see GeminiChatMessage). */
type GeminiDelta = ChatCompletionDelta & { reasoning?: string };

interface ChoiceState {
  finished: boolean;
  /** Tool calls sent so far; the next one's `index`. */
  toolCalls: number;
}

/**
 * Turns the events of one `streamGenerateContent?alt=sse` stream into our chunks. Every Gemini event is a
 * whole GenerateContentResponse holding the next slice of each candidate; usage is cumulative, so the last
 * one counts. Gemini sends no terminator: the body ends after the event with the finish reason.
 */
export class GeminiChatStreamTranslator {
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly choices = new Map<number, ChoiceState>();
  private id: string | undefined;
  private model: string;
  private lastUsage: GeminiUsageMetadata | undefined;

  constructor(
    private readonly callerWantsUsage: boolean,
    fallbackModel: string,
  ) {
    this.model = fallbackModel;
  }

  /** The chunks one event yields, in order; none for an event that carries nothing for the caller. */
  translate(event: ServerSentEvent): ChatCompletionChunk[] {
    const json = parseUpstreamJson(event.data, 'stream chunk');
    if (typeof json === 'object' && json !== null && 'error' in json) throw midStreamError(json);
    const res = checkUpstreamShape(json, geminiResponseSchema, 'stream chunk');
    this.id ??= res.responseId || newId('chatcmpl-');
    if (res.modelVersion) this.model = res.modelVersion;
    if (res.usageMetadata) this.lastUsage = res.usageMetadata;

    const out: ChatCompletionChunk[] = [];
    const candidates = res.candidates ?? [];
    const blockReason = res.promptFeedback?.blockReason;
    if (candidates.length === 0 && blockReason) {
      this.start(0, out).finished = true;
      out.push(this.chunk(0, { refusal: geminiRefusalText(blockReason, 'prompt') }, null));
      out.push(this.chunk(0, {}, 'stop'));
      return out;
    }
    candidates.forEach((candidate, position) => this.translateCandidate(candidate, candidate.index ?? position, out));
    return out;
  }

  /** Called when the body ended: a stream cut off before every choice finished is a failed call, not a short answer. */
  end(): ChatCompletionChunk[] {
    if (this.choices.size === 0 || [...this.choices.values()].some((choice) => !choice.finished)) throw unfinishedStreamError();
    if (!this.callerWantsUsage) return [];
    return [{ id: this.id as string, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: this.usage() }];
  }

  usage(): Usage | null {
    return this.lastUsage ? convertGeminiUsage(this.lastUsage, this.id) : null;
  }

  private translateCandidate(candidate: GeminiCandidate, index: number, out: ChatCompletionChunk[]): void {
    const state = this.start(index, out);
    if (state.finished) return;
    const parts = readCandidateParts(candidate);
    if (parts.reasoning !== '') out.push(this.chunk(index, { reasoning: parts.reasoning }, null));
    if (parts.text !== '') out.push(this.chunk(index, { content: parts.text }, null, convertGeminiLogprobs(candidate.logprobsResult)));
    if (parts.toolCalls.length > 0) {
      const toolCalls = parts.toolCalls.map((call) => ({ index: state.toolCalls++, ...call }));
      out.push(this.chunk(index, { tool_calls: toolCalls }, null));
    }
    const reason = candidate.finishReason;
    if (!reason) return;
    state.finished = true;
    if (isGeminiRefusal(reason)) out.push(this.chunk(index, { refusal: geminiRefusalText(reason, 'response') }, null));
    out.push(this.chunk(index, {}, mapGeminiFinishReason(reason, state.toolCalls > 0)));
  }

  /** The state of choice `index`, announcing the choice with a role chunk the first time it shows up. */
  private start(index: number, out: ChatCompletionChunk[]): ChoiceState {
    let state = this.choices.get(index);
    if (!state) {
      state = { finished: false, toolCalls: 0 };
      this.choices.set(index, state);
      out.push(this.chunk(index, { role: 'assistant', content: '' }, null));
    }
    return state;
  }

  private chunk(
    index: number,
    delta: GeminiDelta,
    finishReason: ChatCompletionChunkChoice['finish_reason'],
    logprobs?: Record<string, unknown> | null,
  ): ChatCompletionChunk {
    const choice: ChatCompletionChunkChoice = { index, delta, finish_reason: finishReason };
    if (logprobs) choice.logprobs = logprobs;
    const chunk: ChatCompletionChunk = { id: this.id as string, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [choice] };
    if (this.callerWantsUsage) chunk.usage = null;
    return chunk;
  }
}

/** An error Gemini reports inside the stream carries its HTTP status in the body. */
function midStreamError(json: unknown): Error {
  const detail = parseGeminiError(json);
  if (detail.code !== undefined && detail.code >= 400) return mapGeminiHttpError(detail.code, {}, detail);
  return markRetryable(new UpstreamError(`The provider reported an error mid-stream${detail.status ? ` (${detail.status})` : ''}`), true);
}
