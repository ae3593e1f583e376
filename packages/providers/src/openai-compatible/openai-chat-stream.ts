import { UpstreamError } from '@gw/platform';
import { markRetryable, type ChatCompletionChunk, type ServerSentEvent, type Usage } from '@gw/provider-spec';
import { malformedUpstreamError } from '../http/upstream-errors';
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

  /** The chunk to pass on, or undefined for an event that carries nothing for the caller. */
  translate(event: ServerSentEvent): ChatCompletionChunk | undefined {
    if (this.done) return undefined;
    if (event.data === '[DONE]') {
      this.done = true;
      return undefined;
    }
    if (event.event !== undefined && event.event !== 'error') return undefined;

    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      throw malformedUpstreamError('stream chunk');
    }
    if (event.event === 'error' || (typeof json === 'object' && json !== null && 'error' in json)) {
      const { code } = parseOpenAIError(json);
      throw markRetryable(new UpstreamError(`The provider reported an error mid-stream${code ? ` (${code})` : ''}`), true);
    }
    const parsed = openAIChatChunkSchema.safeParse(json);
    if (!parsed.success) throw malformedUpstreamError('stream chunk');
    const raw = parsed.data;

    if (raw.usage) this.seenUsage = convertOpenAIUsage(raw.usage, this.providerRequestId ?? (raw.id || undefined));
    if (raw.choices.some((choice) => choice.finish_reason)) this.finished = true;

    const isUsageOnly = raw.choices.length === 0;
    if (isUsageOnly && !(raw.usage && this.callerWantsUsage)) return undefined;
    const chunk = convertOpenAIChatChunk(raw);
    if (this.callerWantsUsage) chunk.usage = raw.usage ? this.seenUsage : null;
    return chunk;
  }

  /** Called when the body ended: a stream cut off before any finish_reason is a failed call, not a short answer. */
  end(): void {
    if (!this.done && !this.finished) {
      throw markRetryable(new UpstreamError('The provider stream ended before the answer was finished'), true);
    }
  }

  usage(): Usage | null {
    return this.seenUsage;
  }
}
