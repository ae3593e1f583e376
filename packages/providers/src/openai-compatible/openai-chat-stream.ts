import { UpstreamError } from '@gw/platform';
import { markRetryable, type ChatCompletionChunk, type ServerSentEvent, type Usage } from '@gw/provider-spec';
import { unfinishedStreamError } from '../http/upstream-errors';
import { checkUpstreamShape, parseUpstreamJson } from '../http/upstream-json';
import { openAIChatChunkSchema } from './openai-api';
import { convertOpenAIChatChunk } from './convert-from-openai-chat';
import { convertOpenAIUsage } from './convert-openai-usage';
import { parseOpenAIError } from './openai-error';

/**
 * Turns the events of one OpenAI chat stream into our chunks and records the usage. We always ask the
 * upstream for the usage chunk; the caller sees it only if it asked for it too.
 */
export class OpenAIChatStreamTranslator {
  private done = false;
  private finished = false;
  private seenUsage: Usage | null = null;

  constructor(
    private readonly callerWantsUsage: boolean,
    private readonly providerRequestId: string | undefined,
  ) {}

  /** The chunk to pass on, or none for an event that carries nothing for the caller. */
  translate(event: ServerSentEvent): ChatCompletionChunk[] {
    if (this.done) return [];
    if (event.data === '[DONE]') {
      this.done = true;
      return [];
    }
    if (event.event !== undefined && event.event !== 'error') return [];

    const json = parseUpstreamJson(event.data, 'stream chunk');
    if (event.event === 'error' || (typeof json === 'object' && json !== null && 'error' in json)) {
      const { code } = parseOpenAIError(json);
      throw markRetryable(new UpstreamError(`The provider reported an error mid-stream${code ? ` (${code})` : ''}`), true);
    }
    const raw = checkUpstreamShape(json, openAIChatChunkSchema, 'stream chunk');

    if (raw.usage) this.seenUsage = convertOpenAIUsage(raw.usage, this.providerRequestId ?? (raw.id || undefined));
    if (raw.choices.some((choice) => choice.finish_reason)) this.finished = true;

    const isUsageOnly = raw.choices.length === 0;
    if (isUsageOnly && !(raw.usage && this.callerWantsUsage)) return [];
    const chunk = convertOpenAIChatChunk(raw);
    if (this.callerWantsUsage) chunk.usage = raw.usage ? this.seenUsage : null;
    return [chunk];
  }

  /** The provider's `[DONE]` went by: nothing after it counts. */
  complete(): boolean {
    return this.done;
  }

  /** Called when the body ended: a stream cut off before any finish_reason is a failed call, not a short answer. */
  end(): void {
    if (!this.done && !this.finished) throw unfinishedStreamError();
  }

  usage(): Usage | null {
    return this.seenUsage;
  }
}
