import type { ChatCompletion, ChatCompletionRequest, ChatProvider, ChatStream, ChatTarget, Usage } from '@gw/provider-spec';
import { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { translateEventStream } from '../http/translate-event-stream';
import { malformedUpstreamError, mapTransportError } from '../http/upstream-errors';
import { anthropicMessageSchema } from './anthropic-api';
import { AnthropicChatStreamTranslator } from './anthropic-chat-stream';
import { anthropicRequestId, parseJsonBody, postMessages } from './anthropic-http';
import { convertAnthropicUsage } from './convert-anthropic-usage';
import { convertAnthropicMessage } from './convert-from-anthropic-message';
import { convertToAnthropicRequest } from './convert-to-anthropic-request';

/** Chat completions over Anthropic's Messages API (`POST {baseUrl}/messages`). */
export class AnthropicChatProvider implements ChatProvider {
  readonly kind = 'anthropic';

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async chat(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<{ completion: ChatCompletion; usage: Usage }> {
    // Converted before any connection is made: an unsupported parameter is the caller's 400, never a retry.
    const request = convertToAnthropicRequest(req, target.providerModel, false);
    const deadline = new Deadline(target.timeoutMs, signal);
    try {
      const res = await postMessages(this.pools, target, { body: JSON.stringify(request.body), stream: false }, deadline);
      const parsed = anthropicMessageSchema.safeParse(parseJsonBody(await res.body.text()));
      if (!parsed.success) throw malformedUpstreamError('response');
      const usage = convertAnthropicUsage(parsed.data.usage, anthropicRequestId(res.headers) ?? parsed.data.id);
      return { completion: convertAnthropicMessage(parsed.data, usage, request), usage };
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async chatStream(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<ChatStream> {
    const request = convertToAnthropicRequest(req, target.providerModel, true);
    const deadline = new Deadline(target.timeoutMs, signal);
    let res;
    try {
      res = await postMessages(this.pools, target, { body: JSON.stringify(request.body), stream: true }, deadline);
    } catch (err) {
      deadline.dispose();
      throw mapTransportError(err, deadline);
    }
    const translator = new AnthropicChatStreamTranslator({
      jsonToolName: request.jsonToolName,
      includeReasoning: request.includeReasoning,
      callerWantsUsage: req.stream_options?.include_usage === true,
      providerRequestId: anthropicRequestId(res.headers),
    });
    const chunks = translateEventStream(res, deadline, (event) => translator.translate(event), () => translator.end());
    return { chunks, usage: () => translator.usage() };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }
}
