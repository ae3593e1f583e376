import type { StreamOutcome } from '@gw/billed-call';
import { InputError, NotFoundError, type Identity } from '@gw/platform';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatStream, ChatTarget, Usage } from '@gw/provider-spec';
import type { CatalogModel } from '@gw/catalog';
import { callBounds, inferenceBilledCalls, type BilledCallDeps, type CallPlan, type InferenceBilledCalls } from '../billed-call/inference-billed-calls';
import type { ModelDirectory } from '../catalog/model-objects';
import type { Route } from '../routing/deployment-router';
import { chatChunkChars, promptChars } from '../usage/usage-estimate';
import type { CallArchiver } from '@gw/call-archive';
import { ChatStreamAssembler, tapped } from '../archive/stream-assembly';
import { routesHonouring, validateChatBody, validateChatForModel } from './validate-chat-request';

export interface ChatDeps extends BilledCallDeps {
  models: ModelDirectory;
  archive: CallArchiver;
}

export interface StartedStream {
  requestId: string;
  chunks: AsyncIterable<ChatCompletionChunk>;
  /** Bills what the stream produced; call once, after iteration ended (normally or not). */
  finish(outcome: StreamOutcome): void;
}

export interface StartedChatStream extends StartedStream {
  /** The deployment that serves the stream (its price bills it). */
  deployment: string;
  /** The chunk as the client receives it: usage only when asked for (`stream_options.include_usage`); null: not sent. */
  clientChunk(chunk: ChatCompletionChunk): ChatCompletionChunk | null;
  /** What the provider reported for the whole stream; read once it ended. */
  usage(): Usage;
}

/** Chat completions: validation and the chat format; the billed-call lifecycle authorizes, routes and bills. */
export class ChatService {
  private readonly calls: InferenceBilledCalls;

  constructor(private readonly deps: ChatDeps) {
    this.calls = inferenceBilledCalls(deps);
  }

  prepare(body: unknown) {
    const req = validateChatBody(body);
    const entry = this.deps.models.get(req.model);
    if (!entry) throw new NotFoundError(`Model '${req.model}' not found`, 'model', 'model_not_found');
    if (entry.model.media) throw new InputError(`Model '${entry.model.id}' is a ${entry.model.media} model, served by the media endpoints`, 'model', 'unsupported_api');
    validateChatForModel(req, entry.model);
    return { req, model: entry.model, serves: routesHonouring(req, entry.model, this.deps.router) };
  }

  /**
   * `opts.requestId`: bill under an id made earlier (an async job's, the same on every re-run, so billing
   * counts it once); `opts.signal` aborts the upstream call (nothing is billed when it aborts first).
   */
  async complete(body: unknown, id: Identity, traceId: string, opts: { requestId?: string; signal?: AbortSignal } = {}): Promise<{ requestId: string; completion: ChatCompletion; deployment: string }> {
    const { req, model, serves } = this.prepare(body);
    const startedAtMs = Date.now();
    const { requestId, result: { completion, usage }, route } = await this.calls.call({
      apiType: 'chat', identity: id, traceId, model: model.id, plan: plan(req, model, serves), requestId: opts.requestId,
      send: (r) => r.provider.chat(req, withIdempotencyKey(r, opts.requestId), opts.signal),
      usageOf: ({ completion: c, usage }) => ({
        usage, providerResponseId: c.id, servedModel: c.model, finishReason: c.choices[0]?.finish_reason ?? '',
      }),
    });
    const answer = { ...completion, usage: normalizedUsage(usage) };
    this.deps.archive.record({
      requestId, identity: id, apiType: 'chat', model: model.id, providerResponseId: completion.id, streamed: false, request: body, response: answer, startedAtMs, traceId,
    });
    return { requestId, completion: answer, deployment: route.deployment.id };
  }

  /** `opts.requestId`: bill under an id made earlier (a service caller's, for idempotency). */
  async stream(body: unknown, id: Identity, traceId: string, opts: { requestId?: string } = {}): Promise<StartedChatStream> {
    const { req, model, serves } = this.prepare(body);
    // The id, model and finish reason seen last, for the usage record.
    let last: ChatCompletionChunk | null = null;
    const startedAtMs = Date.now();
    const started = await this.calls.stream<ChatStream, ChatCompletionChunk>({
      apiType: 'chat', identity: id, traceId, model: model.id, plan: plan(req, model, serves), requestId: opts.requestId,
      promptChars: promptChars([req.messages, req.tools]),
      open: (r) => r.provider.chatStream(req, withIdempotencyKey(r, opts.requestId)),
      items: (s) => s.chunks,
      progress: (c) => {
        if (c.choices.length > 0 || c.usage) last = mergeLast(last, c);
        return { chars: chatChunkChars(c), providerResponseId: c.id, servedModel: c.model };
      },
      usageOf: (s, r) => ({
        usage: s.usage(), providerResponseId: last?.id ?? '', servedModel: last?.model ?? r.target.providerModel,
        finishReason: last?.choices[0]?.finish_reason ?? '',
      }),
    });
    const includeUsage = req.stream_options?.include_usage === true;
    const assembled = new ChatStreamAssembler();
    let archived = false;
    return {
      requestId: started.requestId,
      chunks: tapped(started.items, (c) => assembled.add(c)),
      finish: (outcome) => {
        started.finish(outcome);
        if (archived) return;
        archived = true;
        this.deps.archive.record({
          requestId: started.requestId, identity: id, apiType: 'chat', model: model.id, providerResponseId: last?.id ?? '', streamed: true,
          request: body, response: assembled.result(), startedAtMs, traceId,
        });
      },
      deployment: started.route.deployment.id,
      clientChunk: (chunk) => {
        if (includeUsage) return chunk;
        return chunk.choices.length === 0 ? null : stripUsage(chunk);
      },
      usage: () => normalizedUsage(started.stream.usage() ?? {}),
    };
  }

  /** Holds the call's worst case under `requestId` (idempotent: an async job's re-runs hold once). */
  async reserve(id: Identity, requestId: string, { req, model }: { req: ChatCompletionRequest; model: CatalogModel }, traceId: string): Promise<void> {
    await this.deps.spend.reserve(id, requestId, callBounds(this.deps.router, plan(req, model, routesHonouring(req, model, this.deps.router))), traceId);
  }

  /** Drops the hold of a call that will not run (a cancelled queued job). */
  release(id: Identity, requestId: string, traceId: string): void {
    this.deps.spend.release(id, requestId, traceId);
  }
}

function plan(req: ChatCompletionRequest, model: CatalogModel, serves: (route: Route) => boolean): CallPlan {
  return { model, serves, input: req, maxOutputTokens: req.max_completion_tokens ?? req.max_tokens ?? null, choices: req.n ?? 1 };
}

/** Keeps the chunk that carried the finish reason (or the first one seen). */
function mergeLast(prev: ChatCompletionChunk | null, chunk: ChatCompletionChunk): ChatCompletionChunk {
  if (!prev || chunk.choices.some((c) => c.finish_reason)) return chunk;
  return prev;
}

function stripUsage(chunk: ChatCompletionChunk): ChatCompletionChunk {
  if (chunk.usage === undefined) return chunk;
  const { usage: _usage, ...rest } = chunk;
  return rest as ChatCompletionChunk;
}

/** Spec Usage: token counts only as reported; `total_tokens` filled when both halves are known. */
export function normalizedUsage(u: Usage): Usage {
  const out: Usage = { ...u };
  if (out.total_tokens === undefined && out.prompt_tokens !== undefined && out.completion_tokens !== undefined) {
    out.total_tokens = out.prompt_tokens + out.completion_tokens;
  }
  return out;
}

/**
 * A call billed under an id made earlier (an async job's) may be made again by a re-run: the same key on every
 * attempt at one deployment, so an upstream that deduplicates answers a re-run without generating twice.
 */
function withIdempotencyKey(route: Route, requestId: string | undefined): ChatTarget {
  return requestId ? { ...route.target, idempotencyKey: `${requestId}:${route.deployment.id}` } : route.target;
}
