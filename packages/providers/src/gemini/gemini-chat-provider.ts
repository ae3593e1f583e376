import type { Dispatcher } from 'undici';
import {
  readServerSentEvents,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  type ChatProvider,
  type ChatStream,
  type ChatTarget,
  type Usage,
} from '@gw/provider-spec';
import { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { readCappedText } from '../http/read-capped-text';
import { releasingIterable } from '../http/releasing-iterable';
import { malformedUpstreamError, mapTransportError } from '../http/upstream-errors';
import { convertGeminiResponse } from './convert-from-gemini-response';
import { convertGeminiUsage } from './convert-gemini-usage';
import { convertToGeminiRequest } from './convert-to-gemini-request';
import { geminiResponseSchema } from './gemini-api';
import { GeminiChatStreamTranslator } from './gemini-chat-stream';
import { mapGeminiHttpError, parseGeminiError } from './gemini-error';

const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Chat over Google's Gemini `generateContent` API. `target.baseUrl` is up to the API version, e.g.
 * `https://generativelanguage.googleapis.com/v1beta`; the key goes in `x-goog-api-key`, never in the URL.
 */
export class GeminiChatProvider implements ChatProvider {
  readonly kind = 'gemini';

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async chat(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<{ completion: ChatCompletion; usage: Usage }> {
    // Conversion errors are the caller's 400s: raised before any connection is taken.
    const body = JSON.stringify(convertToGeminiRequest(req, target.providerModel));
    const deadline = new Deadline(target.timeoutMs, signal);
    try {
      const res = await this.send(body, target, false, deadline);
      const text = await res.body.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw malformedUpstreamError('response');
      }
      const parsed = geminiResponseSchema.safeParse(json);
      if (!parsed.success) throw malformedUpstreamError('response');
      const usage = convertGeminiUsage(parsed.data.usageMetadata, parsed.data.responseId ?? undefined);
      const completion = convertGeminiResponse(parsed.data, usage, target.providerModel);
      if (completion.choices.length === 0) throw malformedUpstreamError('response');
      return { completion, usage };
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async chatStream(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<ChatStream> {
    const body = JSON.stringify(convertToGeminiRequest(req, target.providerModel));
    const deadline = new Deadline(target.timeoutMs, signal);
    let res: Dispatcher.ResponseData;
    try {
      res = await this.send(body, target, true, deadline);
    } catch (err) {
      deadline.dispose();
      throw mapTransportError(err, deadline);
    }
    // From here on the per-request bodyTimeout bounds each gap between chunks; a long answer is fine.
    deadline.stopTimer();
    const translator = new GeminiChatStreamTranslator(req.stream_options?.include_usage === true, target.providerModel);
    const upstream = res.body;

    const release = () => {
      if (!upstream.destroyed) {
        // undici reports a destroy before the end as an 'error' event; nobody is left to hear it.
        upstream.on('error', () => {});
        upstream.destroy();
      }
      deadline.dispose();
    };
    async function* translate(): AsyncGenerator<ChatCompletionChunk> {
      try {
        for await (const event of readServerSentEvents(upstream)) yield* translator.translate(event);
        yield* translator.end();
      } catch (err) {
        throw mapTransportError(err, deadline);
      } finally {
        release();
      }
    }
    return { chunks: releasingIterable(translate(), release), usage: () => translator.usage() };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  /**
   * Not the shared postUpstream: Gemini's failures need its own mapping (see mapGeminiHttpError), and the
   * stream endpoint takes `alt=sse` next to any query of the base URL.
   */
  private async send(body: string, target: ChatTarget, stream: boolean, deadline: Deadline): Promise<Dispatcher.ResponseData> {
    const method = stream ? 'streamGenerateContent' : 'generateContent';
    const route = this.pools.route(target.baseUrl, `/models/${encodeURIComponent(target.providerModel)}:${method}`);
    // route() appends the base URL's own query, if any, after the endpoint.
    const path = stream ? `${route.path}${route.path.includes('?') ? '&' : '?'}alt=sse` : route.path;
    const res = await route.pool.request({
      method: 'POST',
      path,
      headers: requestHeaders(target, stream),
      body,
      signal: deadline.signal,
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    });
    if (res.statusCode >= 200 && res.statusCode < 300) return res;
    const text = await readCappedText(res.body, MAX_ERROR_BODY_BYTES);
    throw mapGeminiHttpError(res.statusCode, res.headers, parseGeminiError(text));
  }
}

function requestHeaders(target: ChatTarget, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.extraHeaders ?? {})) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers.accept = stream ? 'text/event-stream' : 'application/json';
  if (target.apiKey) headers['x-goog-api-key'] = target.apiKey;
  return headers;
}
