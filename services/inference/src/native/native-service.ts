import type { IncomingHttpHeaders } from 'node:http';
import type { StreamOutcome } from '@gw/billed-call';
import type { CatalogModel } from '@gw/catalog';
import { InputError, NotFoundError, type Identity, type Logger } from '@gw/platform';
import type { ChatCompletionRequest, NativeApi, NativeApiTranslator, NativeEvent, NativeRequest, NativeResponse, NativeStream } from '@gw/provider-spec';
import { inferenceBilledCalls, type BilledCallDeps, type CallPlan, type InferenceBilledCalls } from '../billed-call/inference-billed-calls';
import type { ModelDirectory } from '../catalog/model-objects';
import { validateAgainstModel } from '../chat/validate-chat-request';
import type { Route } from '../routing/deployment-router';
import { nativeEventChars, promptChars } from '../usage/usage-estimate';
import { check, type Body } from './body-checks';
import { validateCountTokensRequest } from './messages-rules';
import { messagesPromptEstimate } from './native-model-checks';
import { NATIVE_API_RULES } from './native-api-rules';
import type { NativeTranslators } from './native-translators';
import type { CallArchiver } from '@gw/call-archive';
import { nativeStreamAssembler, tapped } from '../archive/stream-assembly';

export interface NativeDeps extends BilledCallDeps {
  models: ModelDirectory;
  translators: NativeTranslators;
  logger: Logger;
  archive: CallArchiver;
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
  /** Bills what the stream produced; call once, after iteration ended (normally or not). */
  finish(outcome: StreamOutcome): void;
}

interface Prepared {
  model: CatalogModel;
  body: Body;
  headers: Record<string, string>;
  plan: CallPlan;
}

/**
 * `POST /v1/responses` and `POST /v1/messages`: the provider's own format passes through both ways; the
 * gateway validates, and the billed-call lifecycle authorizes, routes (with fallback before the first byte) and bills.
 */
export class NativeService {
  private readonly calls: InferenceBilledCalls;

  constructor(private readonly deps: NativeDeps) {
    this.calls = inferenceBilledCalls(deps);
  }

  async call(c: NativeCall): Promise<{ requestId: string; response: NativeResponse }> {
    const p = this.prepare(c);
    const startedAtMs = Date.now();
    const { requestId, result } = await this.calls.call({
      apiType: c.api, identity: c.identity, traceId: c.traceId, model: p.model.id, plan: p.plan,
      send: (r) => this.translator(c.api, r).call(this.request(p, r), r.target),
      usageOf: (res) => ({ usage: res.usage, providerResponseId: res.providerResponseId, servedModel: res.servedModel, finishReason: '' }),
    });
    this.deps.archive.record({
      requestId, identity: c.identity, apiType: c.api, model: p.model.id, providerResponseId: result.providerResponseId, streamed: false,
      request: c.body, response: result.body, startedAtMs, traceId: c.traceId,
    });
    return { requestId, response: result };
  }

  async stream(c: NativeCall): Promise<StartedNativeStream> {
    const p = this.prepare(c);
    const b = p.body;
    const startedAtMs = Date.now();
    const started = await this.calls.stream<NativeStream, NativeEvent>({
      apiType: c.api, identity: c.identity, traceId: c.traceId, model: p.model.id, plan: p.plan,
      promptChars: promptChars([b.input, b.messages, b.system, b.instructions, b.tools]),
      open: (r) => this.translator(c.api, r).stream(this.request(p, r), r.target),
      items: (s) => s.events,
      progress: (e, s) => ({ chars: nativeEventChars(e), providerResponseId: s.providerResponseId(), servedModel: s.servedModel() }),
      usageOf: (s) => ({ usage: s.usage(), providerResponseId: s.providerResponseId(), servedModel: s.servedModel(), finishReason: '' }),
    });
    const assembled = nativeStreamAssembler(c.api);
    let archived = false;
    return {
      requestId: started.requestId,
      events: tapped(started.items, (e) => assembled.add(e)),
      finish: (outcome) => {
        started.finish(outcome);
        if (archived) return;
        archived = true;
        this.deps.archive.record({
          requestId: started.requestId, identity: c.identity, apiType: c.api, model: p.model.id, providerResponseId: started.stream.providerResponseId(),
          streamed: true, request: c.body, response: assembled.result(), startedAtMs, traceId: c.traceId,
        });
      },
    };
  }

  /**
   * `POST /v1/messages/count_tokens`: the prompt's input tokens, asked of the provider's count endpoint where a
   * route serving the model has one (with fallback), otherwise the gateway's estimate (messagesPromptEstimate).
   * Counting is free upstream and generates nothing: no hold, no usage event.
   */
  async countTokens(c: Omit<NativeCall, 'api'>): Promise<{ input_tokens: number }> {
    const { model, body, headers } = this.prepare({ ...c, api: 'messages' }, validateCountTokensRequest);
    // Generation-only fields do not change the count, and the count endpoint does not take them.
    const { max_tokens: _cap, stream: _stream, metadata: _metadata, ...prompt } = body;
    const counts = (r: Route) => this.deps.translators.for('messages', r.kind)?.countTokens !== undefined;
    if (this.deps.router.candidates(model, counts).length === 0) return { input_tokens: messagesPromptEstimate(body) };
    const log = this.deps.logger.child({ traceId: c.traceId });
    const { result } = await this.deps.router.attempt(model,
      (r) => this.translator('messages', r).countTokens!({ body: { ...prompt, model: r.target.providerModel }, headers }, r.target), counts, log);
    return { input_tokens: result };
  }

  private prepare(c: NativeCall, validate: (body: unknown) => Body = NATIVE_API_RULES[c.api].validate): Prepared {
    const rules = NATIVE_API_RULES[c.api];
    const body = validate(c.body);
    const entry = this.deps.models.get(body.model as string);
    if (!entry) throw new NotFoundError(`Model '${body.model}' not found`, 'model', 'model_not_found');
    if (entry.model.media) throw new InputError(`Model '${entry.model.id}' is a ${entry.model.media} model, served by the media endpoints`, 'model', 'unsupported_api');
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
    return { model, body: upstreamBody, headers, plan: { model, serves, input: upstreamBody, maxOutputTokens: typeof cap === 'number' ? cap : null, choices: 1 } };
  }

  private translator(api: NativeApi, route: Route): NativeApiTranslator {
    // `serves` lets only routes with a translator through.
    return this.deps.translators.for(api, route.kind)!;
  }

  private request(p: Prepared, route: Route): NativeRequest {
    return { body: { ...p.body, model: route.target.providerModel }, headers: p.headers };
  }
}
