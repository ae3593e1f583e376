import type { ChatTarget, NativeApiTranslator, NativeRequest, NativeResponse, NativeStream } from '@gw/provider-spec';
import { nativeEventStream, nativeResponse } from '../http/native-event-stream';
import { OriginPools } from '../http/origin-pools';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { anthropicMessageEnvelopeSchema, anthropicTokenCountSchema } from './anthropic-api';
import { anthropicRequestId, postMessages } from './anthropic-http';
import { AnthropicNativeStreamObserver } from './anthropic-native-stream';
import { convertAnthropicUsage } from './convert-anthropic-usage';

/**
 * `POST /v1/messages` (and `/v1/messages/count_tokens`) passthrough to an Anthropic upstream: the client's body goes out as given (model already
 * replaced) with the gateway's credential; the answer comes back untouched, and only id, model and usage are
 * read from it.
 */
export class AnthropicMessagesTranslator implements NativeApiTranslator {
  readonly api = 'messages' as const;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async call(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeResponse> {
    return callUpstream(target, signal, async (deadline) => {
      const call = { body: bodyFor(req.body, false), stream: false, clientHeaders: req.headers };
      const res = await postMessages(this.pools, target, call, deadline);
      const { json, data } = await readJsonAnswer(res, anthropicMessageEnvelopeSchema);
      return nativeResponse(res, json, data, convertAnthropicUsage(data.usage, anthropicRequestId(res.headers) ?? data.id));
    });
  }

  async stream(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeStream> {
    const { res, deadline } = await openUpstreamStream(target, signal, (d) =>
      postMessages(this.pools, target, { body: bodyFor(req.body, true), stream: true, clientHeaders: req.headers }, d),
    );
    return nativeEventStream(res, deadline, new AnthropicNativeStreamObserver(anthropicRequestId(res.headers)));
  }

  async countTokens(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<number> {
    return callUpstream(target, signal, async (deadline) => {
      const call = { body: JSON.stringify(req.body), stream: false, clientHeaders: req.headers };
      const res = await postMessages(this.pools, target, call, deadline, '/messages/count_tokens');
      return (await readJsonAnswer(res, anthropicTokenCountSchema)).data.input_tokens;
    });
  }

  /** Releases pooled upstream connections. */
  async close(): Promise<void> {
    await this.pools.close();
  }
}

/** The client's body, serialized; `stream` is only touched when it disagrees with the kind of call. */
function bodyFor(body: Record<string, unknown>, stream: boolean): string {
  if ((body.stream === true) === stream) return JSON.stringify(body);
  const { stream: _ignored, ...rest } = body;
  return JSON.stringify(stream ? { ...rest, stream: true } : rest);
}
