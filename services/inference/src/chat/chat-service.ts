import { NotFoundError, newRequestId, type Identity, type Logger } from '@gw/platform';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatStream, Usage } from '@gw/provider-spec';
import type { ModelDirectory } from '../catalog/model-objects';
import type { DeploymentRouter, Route } from '../routing/deployment-router';
import type { SpendGuard } from '../spend/spend-guard';
import type { UsageRecorder } from '../usage/usage-recorder';
import { validateAgainstModel, validateChatBody } from './validate-chat-request';

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
    validateAgainstModel(req, entry.model);
    return { req, model: entry.model };
  }

  /**
   * `opts.requestId`: bill under an id made earlier (an async job's, the same on every re-run, so billing
   * counts it once); `opts.signal` aborts the upstream call (nothing is billed when it aborts first).
   */
  async complete(body: unknown, id: Identity, traceId: string, opts: { requestId?: string; signal?: AbortSignal } = {}): Promise<{ requestId: string; completion: ChatCompletion }> {
    const { req, model } = this.prepare(body);
    await this.deps.spend.authorize(id, traceId);
    const requestId = opts.requestId ?? newRequestId();
    const log = this.deps.logger.child({ traceId, requestId });
    const startedAt = Date.now();
    const { result, route } = await this.deps.router.attempt(model, (r) => r.provider.chat(req, r.target, opts.signal), undefined, log);
    const { completion, usage } = result;
    this.bill(id, route, requestId, model.id, {
      providerResponseId: completion.id, servedModel: completion.model, streamed: false, cancelled: false,
      finishReason: completion.choices[0]?.finish_reason ?? '', usage, startedAt, firstByteAt: startedAt,
    });
    return { requestId, completion: { ...completion, usage: normalizedUsage(usage) } };
  }

  async stream(body: unknown, id: Identity, traceId: string): Promise<StartedStream & { includeUsage: boolean; req: ChatCompletionRequest }> {
    const { req, model } = this.prepare(body);
    await this.deps.spend.authorize(id, traceId);
    const requestId = newRequestId();
    const log = this.deps.logger.child({ traceId, requestId });
    const startedAt = Date.now();
    const { result: stream, route } = await this.deps.router.attempt<ChatStream>(model, (r) => r.provider.chatStream(req, r.target), undefined, log);
    const firstByteAt = Date.now();
    let billed = false;
    return {
      req,
      requestId,
      includeUsage: req.stream_options?.include_usage === true,
      chunks: stream.chunks,
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
      },
    };
  }

  private bill(id: Identity, route: Route, requestId: string, model: string, call: {
    providerResponseId: string; servedModel: string; streamed: boolean; cancelled: boolean; finishReason: string;
    usage: Usage; startedAt: number; firstByteAt: number;
  }): void {
    const estimate = this.deps.usage.record({
      requestId, accountId: id.accountId, keyHash: id.keyHash, model, providerName: route.providerName,
      deployment: route.deployment, apiType: 'chat', ...call,
    });
    this.deps.spend.noteCharge(id.accountId, id.keyHash, estimate);
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
