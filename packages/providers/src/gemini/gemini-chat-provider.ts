import type { ChatCompletion, ChatCompletionRequest, ChatProvider, ChatStream, ChatTarget, Usage } from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { jsonRequestHeaders, postUpstream } from '../http/post-upstream';
import { translateEventStream } from '../http/translate-event-stream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { malformedUpstreamError } from '../http/upstream-errors';
import { readJsonAnswer } from '../http/upstream-json';
import { convertGeminiResponse } from './convert-from-gemini-response';
import { convertGeminiUsage } from './convert-gemini-usage';
import { convertToGeminiRequest, GEMINI_CAPABILITIES } from './convert-to-gemini-request';
import { geminiResponseSchema } from './gemini-api';
import { GeminiChatStreamTranslator } from './gemini-chat-stream';
import { mapGeminiHttpError, parseGeminiError } from './gemini-error';

/**
 * Chat over Google's Gemini `generateContent` API. `target.baseUrl` is up to the API version, e.g.
 * `https://generativelanguage.googleapis.com/v1beta`; the key goes in `x-goog-api-key`, never in the URL.
 */
export class GeminiChatProvider implements ChatProvider {
  readonly kind = 'gemini';
  readonly capabilities = GEMINI_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async chat(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<{ completion: ChatCompletion; usage: Usage }> {
    // Conversion errors are the caller's 400s: raised before any connection is taken.
    const body = JSON.stringify(convertToGeminiRequest(req, target.providerModel));
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.send(body, target, false, deadline);
      const { data } = await readJsonAnswer(res, geminiResponseSchema);
      const usage = convertGeminiUsage(data.usageMetadata, data.responseId ?? undefined);
      const completion = convertGeminiResponse(data, usage, target.providerModel);
      if (completion.choices.length === 0) throw malformedUpstreamError('response');
      return { completion, usage };
    });
  }

  async chatStream(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<ChatStream> {
    const body = JSON.stringify(convertToGeminiRequest(req, target.providerModel));
    const { res, deadline } = await openUpstreamStream(target, signal, (d) => this.send(body, target, true, d));
    const translator = new GeminiChatStreamTranslator(req.stream_options?.include_usage === true, target.providerModel);
    const chunks = translateEventStream(res, deadline, (event) => translator.translate(event), () => translator.end());
    return { chunks, usage: () => translator.usage() };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  /** Gemini's failures need its own mapping (see mapGeminiHttpError); the stream endpoint takes `alt=sse`. */
  private send(body: string, target: ChatTarget, stream: boolean, deadline: Deadline): Promise<UpstreamAnswer> {
    const method = stream ? 'streamGenerateContent' : 'generateContent';
    return postUpstream(this.pools, target, {
      endpoint: `/models/${encodeURIComponent(target.providerModel)}:${method}`,
      query: stream ? 'alt=sse' : undefined,
      headers: requestHeaders(target, stream),
      body,
      eventStream: stream,
      deadline,
      mapError: (status, headers, text) => mapGeminiHttpError(status, headers, parseGeminiError(text)),
    });
  }
}

function requestHeaders(target: ChatTarget, stream: boolean): Record<string, string> {
  const headers = jsonRequestHeaders(target, stream);
  if (target.apiKey) headers['x-goog-api-key'] = target.apiKey;
  return headers;
}
