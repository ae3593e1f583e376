import { NotFoundError, newRequestId, type Identity, type Logger } from '@gw/platform';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatStream, ChatTarget, Usage } from '@gw/provider-spec';
import type { CatalogModel } from '@gw/catalog';
import type { ModelDirectory } from '../catalog/model-objects';
import type { DeploymentRouter, Route } from '../routing/deployment-router';
import type { SpendGuard } from '../spend/spend-guard';
import { chatChunkChars, observed, promptChars } from '../usage/usage-estimate';
import type { UsageRecorder } from '../usage/usage-recorder';
import { routesHonouring, validateChatBody, validateChatForModel } from './validate-chat-request';

export interface ChatDeps {
  models: ModelDirectory;
  router: DeploymentRouter;
  spend: SpendGuard;
  usage: UsageRecorder;
  logger: Logger;
}

export interface StartedStream {
  requestId: string;
  chunks: AsyncIterable<ChatCompletionChunk>;
  /** Bills what the stream produced; call once, after iteration ended (normally or not). */
  finish(outcome: { cancelled: boolean; lastChunk: ChatCompletionChunk | null }): void;
}

/** Chat completions: validate, pre-authorize, route, call, and record usage for billing. */
export class ChatService {
  constructor(private readonly deps: ChatDeps) {}

  prepare(body: unknown) {
    const req = validateChatBody(body);
    const entry = this.deps.models.get(req.model);
    if (!entry) throw new NotFoundError(`Model '${req.model}' not found`, 'model', 'model_not_found');
    validateChatForModel(req, entry.model);
    return { req, model: entry.model, serves: routesHonouring(req, entry.model, this.deps.router) };
  }

  /**
   * `opts.requestId`: bill under an id made earlier (an async job's, the same on every re-run, so billing
   * counts it once); `opts.signal` aborts the upstream call (nothing is billed when it aborts first).
   */
  async complete(body: unknown, id: Identity, traceId: string, opts: { requestId?: string; signal?: AbortSignal } = {}): Promise<{ requestId: string; completion: ChatCompletion }> {
    const { req, model, serves } = this.prepare(body);
    const requestId = opts.requestId ?? newRequestId();
    // Spend hold: reserved here, settled by billing from the usage event, released if the call fails.
    await this.reserve(id, requestId, { req, model }, traceId);
    const log = this.deps.logger.child({ traceId, requestId });
    const startedAt = Date.now();
    const { result, route } = await this.deps.spend.releasedOnFailure(id, requestId, traceId,
      () => this.deps.router.attempt(model, (r) => r.provider.chat(req, withIdempotencyKey(r, opts.requestId), opts.signal), serves, log));
    const { completion, usage } = result;
    this.bill(id, route, requestId, model.id, {
      providerResponseId: completion.id, servedModel: completion.model, streamed: false, cancelled: false,
      finishReason: completion.choices[0]?.finish_reason ?? '', usage, startedAt, firstByteAt: startedAt,
    });
    return { requestId, completion: { ...completion, usage: normalizedUsage(usage) } };
  }

  async stream(body: unknown, id: Identity, traceId: string): Promise<StartedStream & { includeUsage: boolean; req: ChatCompletionRequest }> {
    const { req, model, serves } = this.prepare(body);
    const requestId = newRequestId();
    // Spend hold: reserved here, settled by billing from the usage event, released if the call fails.
    await this.reserve(id, requestId, { req, model }, traceId);
    const log = this.deps.logger.child({ traceId, requestId });
    const startedAt = Date.now();
    // --- open-call journal: written before each provider attempt, so a stream cut by this instance's death is billed.
    const open = this.deps.usage.openStream({
      requestId, accountId: id.accountId, keyHash: id.keyHash, model: model.id, apiType: 'chat', startedAt, promptChars: promptChars([req.messages, req.tools]),
    });
    const { result: stream, route } = await this.deps.spend.releasedOnFailure(id, requestId, traceId,
      () => this.deps.router.attempt<ChatStream>(model, async (r) => {
        await open.sendingTo(r.providerName, r.deployment.id);
        return r.provider.chatStream(req, r.target);
      }, serves, log)).catch((err: unknown) => { open.discard(); throw err; });
    const chunks = observed(stream.chunks, (c) => open.noteOutput(chatChunkChars(c), { providerResponseId: c.id, servedModel: c.model }));
    // --- end open-call journal
    const firstByteAt = Date.now();
    let billed = false;
    return {
      req,
      requestId,
      includeUsage: req.stream_options?.include_usage === true,
      chunks,
      finish: ({ cancelled, lastChunk }) => {
        if (billed) return;
        billed = true;
        const usage = stream.usage();
        if (!usage) {
          log.error({ deployment: route.deployment.id }, 'stream ended without usage; recording zero usage');
        }
        this.bill(id, route, requestId, model.id, {
          providerResponseId: lastChunk?.id ?? '', servedModel: lastChunk?.model ?? route.target.providerModel,
          streamed: true, cancelled, finishReason: lastChunk?.choices[0]?.finish_reason ?? '',
          usage: usage ?? {}, startedAt, firstByteAt,
        });
        open.close();
      },
    };
  }

  /** Holds the call's worst case under `requestId` (idempotent: an async job's re-runs hold once). */
  reserve(id: Identity, requestId: string, { req, model }: { req: ChatCompletionRequest; model: CatalogModel }, traceId: string): Promise<void> {
    return this.deps.spend.reserve(id, requestId, {
      model,
      deployments: this.deps.router.candidates(model).map((r) => r.deployment.id),
      input: req,
      maxOutputTokens: req.max_completion_tokens ?? req.max_tokens ?? null,
      choices: req.n ?? 1,
    }, traceId);
  }

  /** Drops the hold of a call that will not run (a cancelled queued job). */
  release(id: Identity, requestId: string, traceId: string): void {
    this.deps.spend.release(id, requestId, traceId);
  }

  private bill(id: Identity, route: Route, requestId: string, model: string, call: {
    providerResponseId: string; servedModel: string; streamed: boolean; cancelled: boolean; finishReason: string;
    usage: Usage; startedAt: number; firstByteAt: number;
  }): void {
    this.deps.usage.record({
      requestId, accountId: id.accountId, keyHash: id.keyHash, model, providerName: route.providerName,
      deployment: route.deployment, apiType: 'chat', ...call,
    });
  }
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
