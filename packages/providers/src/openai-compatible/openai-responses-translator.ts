import type { Dispatcher } from 'undici';
import type { ChatTarget, NativeApiTranslator, NativeRequest, NativeResponse, NativeStream } from '@gw/provider-spec';
import { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { postUpstream } from '../http/post-upstream';
import { translateEventStream } from '../http/translate-event-stream';
import { malformedUpstreamError, mapTransportError } from '../http/upstream-errors';
import { OPENAI_DIALECT, providerRequestId, requestHeaders } from './openai-chat-provider';
import { parseOpenAIError } from './openai-error';
import { convertResponsesUsage, responseObjectSchema } from './openai-responses-api';
import { OpenAIResponsesStreamObserver } from './openai-responses-stream';

/** `POST /v1/responses` passed through to an upstream that speaks OpenAI's Responses API (`{baseUrl}/responses`). */
export class OpenAIResponsesTranslator implements NativeApiTranslator {
  readonly api = 'responses' as const;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async call(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeResponse> {
    const deadline = new Deadline(target.timeoutMs, signal);
    try {
      const res = await this.send(req, target, false, deadline);
      const text = await res.body.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw malformedUpstreamError('response');
      }
      const parsed = responseObjectSchema.safeParse(body);
      if (!parsed.success) throw malformedUpstreamError('response');
      const { id, model, usage } = parsed.data;
      return {
        status: res.statusCode,
        body,
        usage: convertResponsesUsage(usage, providerRequestId(res.headers) ?? id),
        providerResponseId: id,
        servedModel: model,
      };
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async stream(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeStream> {
    const deadline = new Deadline(target.timeoutMs, signal);
    let res: Dispatcher.ResponseData;
    try {
      res = await this.send(req, target, true, deadline);
    } catch (err) {
      deadline.dispose();
      throw mapTransportError(err, deadline);
    }
    const observer = new OpenAIResponsesStreamObserver(providerRequestId(res.headers), target.providerModel);
    return {
      events: translateEventStream(res, deadline, (event) => observer.observe(event), () => observer.end()),
      usage: () => observer.usage(),
      providerResponseId: () => observer.responseId(),
      servedModel: () => observer.servedModel(),
      errorEvent: (err) => observer.errorEvent(err),
    };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private send(req: NativeRequest, target: ChatTarget, stream: boolean, deadline: Deadline): Promise<Dispatcher.ResponseData> {
    // The target is authoritative for the model, whatever the body says.
    const { stream: _callerStream, ...rest } = req.body;
    const body = { ...rest, model: target.providerModel, ...(stream ? { stream: true } : {}) };
    return postUpstream(this.pools, target, {
      endpoint: '/responses',
      headers: { ...req.headers, ...requestHeaders(target, stream), ...OPENAI_DIALECT.authHeaders(target) },
      body: JSON.stringify(body),
      deadline,
      parseError: parseOpenAIError,
    });
  }
}
