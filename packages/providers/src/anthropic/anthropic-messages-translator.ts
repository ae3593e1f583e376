import type { ChatTarget, NativeApiTranslator, NativeRequest, NativeResponse, NativeStream } from '@gw/provider-spec';
import { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { translateEventStream } from '../http/translate-event-stream';
import { malformedUpstreamError, mapTransportError } from '../http/upstream-errors';
import { anthropicMessageEnvelopeSchema } from './anthropic-api';
import { anthropicRequestId, parseJsonBody, postMessages } from './anthropic-http';
import { AnthropicNativeStreamObserver, anthropicErrorEvent } from './anthropic-native-stream';
import { convertAnthropicUsage } from './convert-anthropic-usage';

/**
 * `POST /v1/messages` passthrough to an Anthropic upstream: the client's body goes out as given (model already
 * replaced) with the gateway's credential; the answer comes back untouched, and only id, model and usage are
 * read from it.
 */
export class AnthropicMessagesTranslator implements NativeApiTranslator {
  readonly api = 'messages' as const;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async call(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeResponse> {
    const deadline = new Deadline(target.timeoutMs, signal);
    try {
      const call = { body: bodyFor(req.body, false), stream: false, clientHeaders: req.headers };
      const res = await postMessages(this.pools, target, call, deadline);
      const body = parseJsonBody(await res.body.text());
      const envelope = anthropicMessageEnvelopeSchema.safeParse(body);
      if (!envelope.success) throw malformedUpstreamError('response');
      const { id, model, usage } = envelope.data;
      return {
        status: res.statusCode,
        body,
        usage: convertAnthropicUsage(usage, anthropicRequestId(res.headers) ?? id),
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
    let res;
    try {
      res = await postMessages(this.pools, target, { body: bodyFor(req.body, true), stream: true, clientHeaders: req.headers }, deadline);
    } catch (err) {
      deadline.dispose();
      throw mapTransportError(err, deadline);
    }
    const observer = new AnthropicNativeStreamObserver(anthropicRequestId(res.headers));
    return {
      events: translateEventStream(res, deadline, (event) => observer.observe(event), () => observer.end()),
      usage: () => observer.usage(),
      providerResponseId: () => observer.id,
      servedModel: () => observer.model,
      errorEvent: anthropicErrorEvent,
    };
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
