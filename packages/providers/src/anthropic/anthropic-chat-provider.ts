import type { ChatCompletion, ChatCompletionRequest, ChatProvider, ChatStream, ChatTarget, Usage } from '@gw/provider-spec';
import { OriginPools } from '../http/origin-pools';
import { translateEventStream } from '../http/translate-event-stream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { anthropicMessageSchema } from './anthropic-api';
import { AnthropicChatStreamTranslator } from './anthropic-chat-stream';
import { anthropicRequestId, postMessages } from './anthropic-http';
import { convertAnthropicUsage } from './convert-anthropic-usage';
import { convertAnthropicMessage } from './convert-from-anthropic-message';
import { ANTHROPIC_CAPABILITIES, convertToAnthropicRequest } from './convert-to-anthropic-request';

/** Chat completions over Anthropic's Messages API (`POST {baseUrl}/messages`). */
export class AnthropicChatProvider implements ChatProvider {
  readonly kind = 'anthropic';
  readonly capabilities = ANTHROPIC_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  async chat(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<{ completion: ChatCompletion; usage: Usage }> {
    // Converted before any connection is made: an unsupported parameter is the caller's 400, never a retry.
    const request = convertToAnthropicRequest(req, target.providerModel, false);
    return callUpstream(target, signal, async (deadline) => {
      const res = await postMessages(this.pools, target, { body: JSON.stringify(request.body), stream: false }, deadline);
      const { data } = await readJsonAnswer(res, anthropicMessageSchema);
      const usage = convertAnthropicUsage(data.usage, anthropicRequestId(res.headers) ?? data.id);
      return { completion: convertAnthropicMessage(data, usage, request), usage };
    });
  }

  async chatStream(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<ChatStream> {
    const request = convertToAnthropicRequest(req, target.providerModel, true);
    const { res, deadline } = await openUpstreamStream(target, signal, (d) =>
      postMessages(this.pools, target, { body: JSON.stringify(request.body), stream: true }, d),
    );
    const translator = new AnthropicChatStreamTranslator({
      jsonToolName: request.jsonToolName,
      includeReasoning: request.includeReasoning,
      callerWantsUsage: req.stream_options?.include_usage === true,
      providerRequestId: anthropicRequestId(res.headers),
    });
    const chunks = translateEventStream(res, deadline, (event) => translator.translate(event), () => translator.end(), () => translator.complete());
    return { chunks, usage: () => translator.usage() };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }
}
