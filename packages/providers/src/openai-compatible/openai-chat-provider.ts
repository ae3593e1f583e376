import type { IncomingHttpHeaders } from 'node:http';
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
import { postUpstream } from '../http/post-upstream';
import { releasingIterable } from '../http/releasing-iterable';
import { malformedUpstreamError, mapTransportError } from '../http/upstream-errors';
import { convertOpenAIChatResponse } from './convert-from-openai-chat';
import { convertOpenAIUsage } from './convert-openai-usage';
import { convertToOpenAIChat } from './convert-to-openai-chat';
import { openAIChatResponseSchema } from './openai-api';
import { OpenAIChatStreamTranslator } from './openai-chat-stream';
import { parseOpenAIError } from './openai-error';

/**
 * Where an OpenAI-format upstream takes chat calls and how it wants the credential. OpenAI and the many
 * compatible hosts (vLLM, Ollama, DeepSeek, Groq) use `/chat/completions` with a Bearer token; Azure OpenAI
 * addresses a deployment by path, versions by query and takes an `api-key` header.
 */
export interface OpenAIDialect {
  kind: string;
  chatEndpoint(target: ChatTarget): string;
  authHeaders(target: ChatTarget): Record<string, string>;
}

export const OPENAI_DIALECT: OpenAIDialect = {
  kind: 'openai-compatible',
  chatEndpoint: () => '/chat/completions',
  authHeaders: (t): Record<string, string> => (t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : {}),
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

  constructor(private readonly pools: OriginPools = new OriginPools(), private readonly dialect: OpenAIDialect = OPENAI_DIALECT) {
    this.kind = dialect.kind;
  }

  async chat(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<{ completion: ChatCompletion; usage: Usage }> {
    const deadline = new Deadline(target.timeoutMs, signal);
    try {
      const res = await this.send(req, target, false, deadline);
      const text = await res.body.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw malformedUpstreamError('response');
      }
      const parsed = openAIChatResponseSchema.safeParse(json);
      if (!parsed.success) throw malformedUpstreamError('response');
      const usage = convertOpenAIUsage(parsed.data.usage, providerRequestId(res.headers) ?? parsed.data.id);
      return { completion: convertOpenAIChatResponse(parsed.data, usage), usage };
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      deadline.dispose();
    }
  }

  async chatStream(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<ChatStream> {
    const deadline = new Deadline(target.timeoutMs, signal);
    let res: Dispatcher.ResponseData;
    try {
      res = await this.send(req, target, true, deadline);
    } catch (err) {
      deadline.dispose();
      throw mapTransportError(err, deadline);
    }
    // From here on the per-request bodyTimeout bounds each gap between chunks; a long answer is fine.
    deadline.stopTimer();
    const translator = new OpenAIChatStreamTranslator(req.stream_options?.include_usage === true, providerRequestId(res.headers));
    const body = res.body;

    async function* translate(): AsyncGenerator<ChatCompletionChunk> {
      try {
        for await (const event of readServerSentEvents(body)) {
          const chunk = translator.translate(event);
          if (chunk) yield chunk;
        }
        translator.end();
      } catch (err) {
        throw mapTransportError(err, deadline);
      } finally {
        release();
      }
    }
    const release = () => {
      if (!body.destroyed) {
        // undici reports a destroy before the end as an 'error' event; nobody is left to hear it.
        body.on('error', () => {});
        body.destroy();
      }
      deadline.dispose();
    };
    return { chunks: releasingIterable(translate(), release), usage: () => translator.usage() };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private send(req: ChatCompletionRequest, target: ChatTarget, stream: boolean, deadline: Deadline): Promise<Dispatcher.ResponseData> {
    return postUpstream(this.pools, target, {
      endpoint: this.dialect.chatEndpoint(target),
      headers: { ...requestHeaders(target, stream), ...this.dialect.authHeaders(target) },
      body: JSON.stringify(convertToOpenAIChat(req, target.providerModel, stream)),
      deadline,
      parseError: parseOpenAIError,
    });
  }
}

export function requestHeaders(target: ChatTarget, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.extraHeaders ?? {})) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  headers.accept = stream ? 'text/event-stream' : 'application/json';
  return headers;
}

export function providerRequestId(headers: IncomingHttpHeaders): string | undefined {
  const id = headers['x-request-id'];
  return (Array.isArray(id) ? id[0] : id) || undefined;
}
