import {
  AuthenticationError, InputError, isRequestId, PayloadTooLargeError, toGatewayError, type GrpcCaller, type Identity, type Logger,
} from '@gw/platform';
import type { CreateChatCompletionResponse, StreamChatCompletionResponse } from '@gw/proto';
import type { ChatService } from '../chat/chat-service';
import { callUsage, type CallPricing } from './call-pricing';
import type { CallClaim, RecordedCalls, RecordedResponse } from './recorded-calls';

/** A chat request as both RPCs carry it. */
export interface GrpcChatRequest {
  body_json: string;
  request_id: string;
}

/** Where a stream's messages go: the transport's call, with its backpressure and its client's departure. */
export interface StreamSink {
  /** Resolves once the message is accepted (or the client is gone). */
  send(message: StreamChatCompletionResponse): Promise<void>;
  readonly clientGone: boolean;
}

export interface GrpcChatDeps {
  chat: ChatService;
  recorded: RecordedCalls;
  pricing: CallPricing;
  /** The HTTP route's body limit, applied to `body_json`. */
  bodyLimitBytes: number;
  /** How long a stream whose client left is still read, so what was generated is known and billed. */
  drainMs: number;
  logger: Logger;
}

/**
 * The chat completion of the gRPC API: the body goes through the HTTP route's own ChatService (the same
 * validation, routing, capabilities, spend hold and usage event), plus what gRPC adds: callers proven by the
 * platform's trust model, a caller-chosen request id for services (idempotent replay), and the call's cost.
 */
export class GrpcChat {
  constructor(private readonly deps: GrpcChatDeps) {}

  async complete(req: GrpcChatRequest, caller: GrpcCaller, traceId: string, signal: AbortSignal): Promise<CreateChatCompletionResponse> {
    const { identity, requestId } = admitCaller(caller, req.request_id);
    const body = this.parseBody(req.body_json);
    if (body.stream === true) throw new InputError('CreateChatCompletion does not stream: call StreamChatCompletion', 'stream');
    this.deps.chat.prepare(body);
    const admission = requestId ? await this.deps.recorded.admit(requestId, identity.accountId, 'unary') : null;
    if (admission?.kind === 'replay' && admission.response.method === 'unary') {
      const { completion_json, usage, cost } = admission.response;
      return { request_id: requestId!, completion_json, usage, cost, replayed: true };
    }
    const claim = admission?.kind === 'run' ? admission.claim : null;
    let result;
    try {
      const factor = await this.deps.pricing.priceFactorPpm(identity.accountId, traceId);
      const { requestId: billedId, completion, deployment } = await this.deps.chat.complete(body, identity, traceId, { requestId, signal });
      const usage = completion.usage ?? {};
      result = { billedId, completion_json: JSON.stringify(completion), usage: callUsage(usage), cost: this.deps.pricing.cost(deployment, usage, factor) };
    } catch (err) {
      await this.abandon(claim, requestId);
      throw err;
    }
    const { billedId, ...response } = result;
    await this.record(claim, billedId, { method: 'unary', ...response });
    return { request_id: billedId, ...response, replayed: false };
  }

  /** Chunks as the HTTP route sends them, then a summary; a client that leaves is billed for what was generated. */
  async stream(req: GrpcChatRequest, caller: GrpcCaller, traceId: string, sink: StreamSink): Promise<void> {
    const { identity, requestId } = admitCaller(caller, req.request_id);
    const parsed = this.parseBody(req.body_json);
    if (parsed.stream === false) throw new InputError('StreamChatCompletion streams: leave stream out or set it true', 'stream');
    // A `stream` of another type is left to the HTTP route's validation, which names it.
    const body = parsed.stream === undefined ? { ...parsed, stream: true } : parsed;
    this.deps.chat.prepare(body);
    const admission = requestId ? await this.deps.recorded.admit(requestId, identity.accountId, 'stream') : null;
    if (admission?.kind === 'replay' && admission.response.method === 'stream') {
      for (const chunk_json of admission.response.chunks) await sink.send({ request_id: requestId!, chunk_json, replayed: true });
      await sink.send({ request_id: requestId!, summary: { usage: admission.response.usage, cost: admission.response.cost }, replayed: true });
      return;
    }
    const claim = admission?.kind === 'run' ? admission.claim : null;
    let factor: number;
    let started;
    try {
      factor = await this.deps.pricing.priceFactorPpm(identity.accountId, traceId);
      started = await this.deps.chat.stream(body, identity, traceId, { requestId });
    } catch (err) {
      await this.abandon(claim, requestId);
      throw err;
    }

    const log = this.deps.logger.child({ traceId, requestId: started.requestId });
    const sent: string[] = [];
    let failure: unknown = null;
    let drainDeadline = 0;
    try {
      for await (const chunk of started.chunks) {
        if (sink.clientGone) {
          drainDeadline ||= Date.now() + this.deps.drainMs;
          if (Date.now() > drainDeadline) break;
          continue;
        }
        const visible = started.clientChunk(chunk);
        if (!visible) continue;
        const chunk_json = JSON.stringify(visible);
        if (claim) sent.push(chunk_json);
        await sink.send({ request_id: started.requestId, chunk_json, replayed: false });
      }
    } catch (err) {
      failure = err;
      log.warn({ err: toGatewayError(err).message }, 'stream failed after the first byte');
    } finally {
      started.finish({ cancelled: sink.clientGone, failed: failure !== null });
    }
    const usage = started.usage();
    const summary = { usage: callUsage(usage), cost: this.deps.pricing.cost(started.deployment, usage, factor) };
    const endedEarly = failure !== null || sink.clientGone;
    await this.record(claim, started.requestId, { method: 'stream', chunks: endedEarly ? [] : sent, ...summary, ended_early: endedEarly });
    if (failure !== null) throw failure;
    if (!sink.clientGone) await sink.send({ request_id: started.requestId, summary, replayed: false });
  }

  private parseBody(bodyJson: string): Record<string, unknown> {
    if (Buffer.byteLength(bodyJson) > this.deps.bodyLimitBytes) throw new PayloadTooLargeError(`body_json is larger than ${this.deps.bodyLimitBytes} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(bodyJson);
    } catch {
      throw new InputError('body_json is not valid JSON', 'body_json');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InputError('Request body must be a JSON object', 'body');
    return body as Record<string, unknown>;
  }

  /** The call failed before anything was billed: the id is free for a retry. */
  private async abandon(claim: CallClaim | null, requestId: string | undefined): Promise<void> {
    await claim?.abandon().catch((err: unknown) => this.deps.logger.warn({ err, requestId }, 'releasing a request_id claim failed; it lapses'));
  }

  /** A response that could not be recorded is still answered; a retry with its id then runs it again (billed once). */
  private async record(claim: CallClaim | null, requestId: string, response: RecordedResponse): Promise<void> {
    await claim?.complete(response).catch((err: unknown) => this.deps.logger.warn({ err, requestId }, 'recording a response for replay failed'));
  }
}

/**
 * Who the call bills, and the request id it may name. An API key bills its own key and may not choose an id
 * (ids are the platform's; only a service replaying its own work names one); a service must act for an account.
 */
function admitCaller(caller: GrpcCaller, requestId: string): { identity: Identity; requestId: string | undefined } {
  if (!caller.identity) throw new AuthenticationError('A service call must name the account it acts for in its signed identity', 'account_required');
  if (!requestId) return { identity: caller.identity, requestId: undefined };
  if (caller.viaApiKey) throw new InputError('request_id may only be set by platform services', 'request_id');
  if (!isRequestId(requestId)) throw new InputError('request_id must be br-<UUIDv4>', 'request_id');
  return { identity: caller.identity, requestId };
}
