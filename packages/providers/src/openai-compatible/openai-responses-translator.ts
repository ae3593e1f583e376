import type { ChatTarget, NativeApiTranslator, NativeRequest, NativeResponse, NativeStream } from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { nativeEventStream, nativeResponse } from '../http/native-event-stream';
import { OriginPools } from '../http/origin-pools';
import { jsonRequestHeaders, postUpstream } from '../http/post-upstream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { OPENAI_DIALECT, providerRequestId } from './openai-chat-provider';
import { mapOpenAIHttpError } from './openai-error';
import { convertResponsesUsage, responseObjectSchema } from './openai-responses-api';
import { OpenAIResponsesStreamObserver } from './openai-responses-stream';

/** `POST /v1/responses` passed through to an upstream that speaks OpenAI's Responses API (`{baseUrl}/responses`). */
export class OpenAIResponsesTranslator implements NativeApiTranslator {
  readonly api = 'responses' as const;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async call(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeResponse> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.send(req, target, false, deadline);
      const { json, data } = await readJsonAnswer(res, responseObjectSchema);
      return nativeResponse(res, json, data, convertResponsesUsage(data.usage, providerRequestId(res.headers) ?? data.id));
    });
  }

  async stream(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeStream> {
    const { res, deadline } = await openUpstreamStream(target, signal, (d) => this.send(req, target, true, d));
    return nativeEventStream(res, deadline, new OpenAIResponsesStreamObserver(providerRequestId(res.headers), target.providerModel));
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private send(req: NativeRequest, target: ChatTarget, stream: boolean, deadline: Deadline): Promise<UpstreamAnswer> {
    // The target is authoritative for the model, whatever the body says.
    const { stream: _callerStream, ...rest } = req.body;
    const body = { ...rest, model: target.providerModel, ...(stream ? { stream: true } : {}) };
    return postUpstream(this.pools, target, {
      endpoint: '/responses',
      headers: { ...req.headers, ...jsonRequestHeaders(target, stream), ...OPENAI_DIALECT.authHeaders(target) },
      body: JSON.stringify(body),
      eventStream: stream,
      deadline,
      mapError: mapOpenAIHttpError,
    });
  }
}
