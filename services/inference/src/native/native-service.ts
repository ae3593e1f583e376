import type { IncomingHttpHeaders } from 'node:http';
import type { CatalogModel } from '@gw/catalog';
import { InputError, NotFoundError, newRequestId, type Identity, type Logger } from '@gw/platform';
import type { ChatCompletionRequest, NativeApi, NativeApiTranslator, NativeEvent, NativeRequest, NativeResponse, NativeStream, Usage } from '@gw/provider-spec';
import type { ModelDirectory } from '../catalog/model-objects';
import { validateAgainstModel } from '../chat/validate-chat-request';
import type { DeploymentRouter, Route } from '../routing/deployment-router';
import type { SpendGuard } from '../spend/spend-guard';
import { nativeEventChars, observed, promptChars } from '../usage/usage-estimate';
import type { UsageRecorder } from '../usage/usage-recorder';
import { check, type Body } from './body-checks';
import { NATIVE_API_RULES } from './native-api-rules';
import type { NativeTranslators } from './native-translators';

export interface NativeDeps {
  models: ModelDirectory;
  router: DeploymentRouter;
  spend: SpendGuard;
  usage: UsageRecorder;
  translators: NativeTranslators;
  logger: Logger;
}

export interface NativeCall {
  api: NativeApi;
  body: unknown;
  headers: IncomingHttpHeaders;
  identity: Identity;
  traceId: string;
}

export interface StartedNativeStream {
  requestId: string;
  events: AsyncIterable<NativeEvent>;
  errorEvent: NativeStream['errorEvent'];
  /** Bills what the stream produced; call once, after iteration ended (normally or not). */
  finish(outcome: { cancelled: boolean }): void;
}

interface Prepared {
  model: CatalogModel;
  body: Body;
  headers: Record<string, string>;
  serves: (route: Route) => boolean;
}

/**
 * `POST /v1/responses` and `POST /v1/messages`: the provider's own format passes through both ways; the
 * gateway validates, pre-authorizes, routes (with fallback before the first byte) and bills.
 */
export class NativeService {
  constructor(private readonly deps: NativeDeps) {}

  async call(c: NativeCall): Promise<{ requestId: string; response: NativeResponse }> {
    const p = this.prepare(c);
    const requestId = newRequestId();
    // Spend hold: reserved here, settled by billing from the usage event, released if the call fails.
    await this.reserve(c, p, requestId);
    const log = this.deps.logger.child({ traceId: c.traceId, requestId });
    const startedAt = Date.now();
    const { result, route } = await this.deps.spend.releasedOnFailure(c.identity, requestId, c.traceId,
      () => this.deps.router.attempt(p.model, (r) => this.translator(c.api, r).call(this.request(p, r), r.target), p.serves, log));
    this.bill(c, route, requestId, p.model.id, {
      providerResponseId: result.providerResponseId, servedModel: result.servedModel, streamed: false, cancelled: false,
      usage: result.usage, startedAt, firstByteAt: startedAt,
    });
    return { requestId, response: result };
  }

  async stream(c: NativeCall): Promise<StartedNativeStream> {
    const p = this.prepare(c);
    const requestId = newRequestId();
    // Spend hold: reserved here, settled by billing from the usage event, released if the call fails.
    await this.reserve(c, p, requestId);
    const log = this.deps.logger.child({ traceId: c.traceId, requestId });
    const startedAt = Date.now();
    // --- open-call journal: written before each provider attempt, so a stream cut by this instance's death is billed.
    const b = p.body;
    const open = this.deps.usage.openStream({
      requestId, accountId: c.identity.accountId, keyHash: c.identity.keyHash, model: p.model.id, apiType: c.api, startedAt,
      promptChars: promptChars([b.input, b.messages, b.system, b.instructions, b.tools]),
    });
    const { result: stream, route } = await this.deps.spend.releasedOnFailure(c.identity, requestId, c.traceId,
      () => this.deps.router.attempt(p.model, async (r) => {
        await open.sendingTo(r.providerName, r.deployment.id);
        return this.translator(c.api, r).stream(this.request(p, r), r.target);
      }, p.serves, log)).catch((err: unknown) => { open.discard(); throw err; });
    const events = observed(stream.events, (e) => open.noteOutput(nativeEventChars(e), { providerResponseId: stream.providerResponseId(), servedModel: stream.servedModel() }));
    // --- end open-call journal
    const firstByteAt = Date.now();
    let billed = false;
    return {
      requestId,
      events,
      errorEvent: (err) => stream.errorEvent(err),
      finish: ({ cancelled }) => {
        if (billed) return;
        billed = true;
        const usage = stream.usage();
        if (!usage) log.error({ deployment: route.deployment.id }, 'native stream ended without usage; recording zero usage');
        this.bill(c, route, requestId, p.model.id, {
          providerResponseId: stream.providerResponseId(), servedModel: stream.servedModel(), streamed: true, cancelled,
          usage: usage ?? {}, startedAt, firstByteAt,
        });
        open.close();
      },
    };
  }

  private reserve(c: NativeCall, p: Prepared, requestId: string): Promise<void> {
    const cap = p.body[NATIVE_API_RULES[c.api].outputTokensParam];
    return this.deps.spend.reserve(c.identity, requestId, {
      model: p.model,
      deployments: this.deps.router.candidates(p.model, p.serves).map((r) => r.deployment.id),
      input: p.body,
      maxOutputTokens: typeof cap === 'number' ? cap : null,
      choices: 1,
    }, c.traceId);
  }

  private prepare(c: NativeCall): Prepared {
    const rules = NATIVE_API_RULES[c.api];
    const body = rules.validate(c.body);
    const entry = this.deps.models.get(body.model as string);
    if (!entry) throw new NotFoundError(`Model '${body.model}' not found`, 'model', 'model_not_found');
    const model = entry.model;
    const serves = (r: Route) => this.deps.translators.for(c.api, r.kind) !== null;
    if (this.deps.router.candidates(model, serves).length === 0) {
      throw new InputError(`Model '${model.id}' is not served through the ${c.api} API`, 'model', 'unsupported_api');
    }
    // The model's own bounds (parameter_schema, per_request_limits) hold for every API.
    validateAgainstModel(body as unknown as ChatCompletionRequest, model);
    rules.checkForModel(body, model);
    const cap = body[rules.outputTokensParam];
    const limit = model.per_request_limits.completion_tokens;
    if (typeof cap === 'number' && limit !== null) {
      check(cap <= limit, rules.outputTokensParam, `${rules.outputTokensParam} must be at most ${limit} for model ${model.id}`);
    }
    const headers: Record<string, string> = {};
    for (const name of rules.forwardedHeaders) {
      const value = c.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstreamBody = { ...body };
    for (const [field, value] of Object.entries(rules.upstreamDefaults)) upstreamBody[field] ??= value;
    return { model, body: upstreamBody, headers, serves };
  }

  private translator(api: NativeApi, route: Route): NativeApiTranslator {
    // `serves` lets only routes with a translator through.
    return this.deps.translators.for(api, route.kind)!;
  }

  private request(p: Prepared, route: Route): NativeRequest {
    return { body: { ...p.body, model: route.target.providerModel }, headers: p.headers };
  }

  private bill(c: NativeCall, route: Route, requestId: string, model: string, call: {
    providerResponseId: string; servedModel: string; streamed: boolean; cancelled: boolean; usage: Usage; startedAt: number; firstByteAt: number;
  }): void {
    this.deps.usage.record({
      requestId, accountId: c.identity.accountId, keyHash: c.identity.keyHash, model, providerName: route.providerName,
      deployment: route.deployment, apiType: c.api, finishReason: '', ...call,
    });
  }
}
