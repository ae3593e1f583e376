import type { IncomingHttpHeaders } from 'node:http';
import type { ChatCompletion, ChatCompletionRequest, ChatProvider, ChatStream, ChatTarget, Usage } from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { headerValue, jsonRequestHeaders, postUpstream } from '../http/post-upstream';
import { translateEventStream } from '../http/translate-event-stream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { convertOpenAIChatResponse } from './convert-from-openai-chat';
import { convertOpenAIUsage } from './convert-openai-usage';
import { convertToOpenAIChat, OPENAI_CAPABILITIES } from './convert-to-openai-chat';
import { openAIChatResponseSchema } from './openai-api';
import { OpenAIChatStreamTranslator } from './openai-chat-stream';
import { mapOpenAIHttpError } from './openai-error';

/**
 * Where an OpenAI-format upstream takes chat calls and how it wants the credential. OpenAI and the many
 * compatible hosts (vLLM, Ollama, DeepSeek, Groq) use `/chat/completions` with a Bearer token; Azure OpenAI
 * addresses a deployment by path, versions by query and takes an `api-key` header.
 */
export interface OpenAIDialect {
  kind: string;
  chatEndpoint(target: ChatTarget): string;
  authHeaders(target: ChatTarget): Record<string, string>;
  /** The header carrying `target.idempotencyKey`, where the upstream deduplicates on one. */
  idempotencyHeader?: string;
}

export const OPENAI_DIALECT: OpenAIDialect = {
  kind: 'openai-compatible',
  chatEndpoint: () => '/chat/completions',
  authHeaders: (t): Record<string, string> => (t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : {}),
  // The IETF draft header that OpenAI-compatible servers and gateways deduplicating on a key read; hosts
  // that do not implement it ignore an unknown header.
  idempotencyHeader: 'idempotency-key',
};

export const AZURE_OPENAI_DIALECT: OpenAIDialect = {
  kind: 'azure-openai',
  chatEndpoint: (t) => {
    if (!t.apiVersion) throw new Error('Azure OpenAI providers need api_version in the catalogue');
    return `/openai/deployments/${encodeURIComponent(t.providerModel)}/chat/completions?api-version=${encodeURIComponent(t.apiVersion)}`;
  },
  authHeaders: (t): Record<string, string> => (t.apiKey ? { 'api-key': t.apiKey } : {}),
};

/** Chat over any upstream that speaks OpenAI's chat completions wire format. */
export class OpenAICompatibleChatProvider implements ChatProvider {
  readonly kind: string;
  readonly capabilities = OPENAI_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools(), private readonly dialect: OpenAIDialect = OPENAI_DIALECT) {
    this.kind = dialect.kind;
  }

  async chat(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<{ completion: ChatCompletion; usage: Usage }> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.send(req, target, false, deadline);
      const { data } = await readJsonAnswer(res, openAIChatResponseSchema);
      const usage = convertOpenAIUsage(data.usage, providerRequestId(res.headers) ?? data.id);
      return { completion: convertOpenAIChatResponse(data, usage), usage };
    });
  }

  async chatStream(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<ChatStream> {
    const { res, deadline } = await openUpstreamStream(target, signal, (d) => this.send(req, target, true, d));
    const translator = new OpenAIChatStreamTranslator(req.stream_options?.include_usage === true, providerRequestId(res.headers));
    const chunks = translateEventStream(res, deadline, (event) => translator.translate(event), () => translator.end(), () => translator.complete());
    return { chunks, usage: () => translator.usage() };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private idempotencyHeaders(target: ChatTarget): Record<string, string> {
    const header = this.dialect.idempotencyHeader;
    return header && target.idempotencyKey ? { [header]: target.idempotencyKey } : {};
  }

  private send(req: ChatCompletionRequest, target: ChatTarget, stream: boolean, deadline: Deadline): Promise<UpstreamAnswer> {
    return postUpstream(this.pools, target, {
      endpoint: this.dialect.chatEndpoint(target),
      headers: { ...jsonRequestHeaders(target, stream), ...this.idempotencyHeaders(target), ...this.dialect.authHeaders(target) },
      body: JSON.stringify(convertToOpenAIChat(req, target.providerModel, stream)),
      eventStream: stream,
      deadline,
      mapError: mapOpenAIHttpError,
    });
  }
}

/** OpenAI's correlation id, sent on every answer as `x-request-id`. */
export function providerRequestId(headers: IncomingHttpHeaders): string | undefined {
  return headerValue(headers, 'x-request-id');
}
