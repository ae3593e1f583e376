import * as grpc from '@grpc/grpc-js';
import {
  currentTraceId, fromGrpcError, GatewayError, GRPC_BINDING_METHOD, grpcClientOptions, IDENTITY_HEADER, injectTraceContext, newTraceId, toGatewayError,
  tracingEnabled, type Identity, type IdentitySigner,
} from '@gw/platform';
import {
  inferenceProto, type CreateChatCompletionResponse, type InferenceClient as GeneratedClient, type InferenceCost, type InferenceUsage,
  type StreamChatCompletionResponse,
} from '@gw/proto';
import type { ChatCompletion, ChatCompletionChunk } from '@gw/provider-spec';

/**
 * How a caller proves who it is (see protos/gateway/inference/v1/inference.proto):
 * - `api-key`: an internal team's API key, billed to the key's account;
 * - `service`: a platform service with the platform secret, acting for the account named on each call
 *   (`actingFor`), signed per call and bound to the method.
 */
export type InferenceCredentials =
  | { kind: 'api-key'; apiKey: string }
  | { kind: 'service'; signer: IdentitySigner };

export interface InferenceCallOptions {
  /** With service credentials (required there): the account and key the call is billed to. */
  actingFor?: Identity;
  /** Service callers only: bill under this `br-<UUIDv4>`; a completed id answers its recorded response. */
  requestId?: string;
  /** Default: the client's `deadlineMs`. */
  deadlineMs?: number;
  traceId?: string;
  /** Aborting cancels the call (a stream is then billed for what was generated). */
  signal?: AbortSignal;
}

export interface CallUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/** Integer USD micros, as billing posts them. */
export interface CallCost {
  /** False: the serving deployment has no price and the call is billed nothing. */
  priced: boolean;
  listMicros: number;
  chargedMicros: number;
}

export interface ChatCompletionResult {
  requestId: string;
  completion: ChatCompletion;
  usage: CallUsage;
  cost: CallCost;
  /** The recorded response of an earlier call with the same request id (no provider call, no new charge). */
  replayed: boolean;
}

export type ChatStreamEvent =
  | { type: 'chunk'; requestId: string; chunk: ChatCompletionChunk; replayed: boolean }
  | { type: 'summary'; requestId: string; usage: CallUsage; cost: CallCost; replayed: boolean };

export interface InferenceClient {
  /** Failures reject with the typed gateway error the service threw (InputError, PaymentRequiredError, ...). */
  createChatCompletion(body: object, opts?: InferenceCallOptions): Promise<ChatCompletionResult>;
  /** Chunks, then one summary when the stream ended normally; a failure throws the typed error. */
  streamChatCompletion(body: object, opts?: InferenceCallOptions): AsyncIterable<ChatStreamEvent>;
  close(): void;
}

export interface InferenceClientOptions {
  /** Deadline of a call that names none: a long generation must fit in it. */
  deadlineMs?: number;
}

/** Long enough for a long generation; a call that needs a tighter bound sets its own. */
export const DEFAULT_INFERENCE_DEADLINE_MS = 10 * 60_000;
/** A completion may be larger than gRPC's default 4 MiB receive limit (long outputs, many choices). */
const MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

const service = inferenceProto.gateway.inference.v1.Inference.service;

/** A client of the inference gRPC API (`gateway.inference.v1.Inference`) at `address` (`host:port`). */
export function createInferenceClient(address: string, credentials: InferenceCredentials, options: InferenceClientOptions = {}): InferenceClient {
  const client: GeneratedClient = new inferenceProto.gateway.inference.v1.Inference(address, grpc.credentials.createInsecure(), {
    ...grpcClientOptions, 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES,
  });
  const defaultDeadlineMs = options.deadlineMs ?? DEFAULT_INFERENCE_DEADLINE_MS;

  const metadataFor = (methodPath: string, opts: InferenceCallOptions): grpc.Metadata => {
    const md = new grpc.Metadata();
    // The caller's trace continues in inference: its span's traceparent goes along, and its trace id by default.
    const traceId = opts.traceId ?? currentTraceId() ?? newTraceId();
    md.set('x-trace-id', traceId);
    if (tracingEnabled()) {
      const carrier: Record<string, string> = {};
      injectTraceContext(carrier);
      for (const [name, value] of Object.entries(carrier)) md.set(name, value);
    }
    if (credentials.kind === 'api-key') {
      md.set('authorization', `Bearer ${credentials.apiKey}`);
    } else {
      if (!opts.actingFor) throw new TypeError('A service call to inference must name the account it acts for (actingFor)');
      md.set(IDENTITY_HEADER, credentials.signer.mint({ method: GRPC_BINDING_METHOD, path: methodPath }, opts.actingFor, traceId));
    }
    return md;
  };
  const callOptions = (opts: InferenceCallOptions): grpc.CallOptions => ({ deadline: new Date(Date.now() + (opts.deadlineMs ?? defaultDeadlineMs)) });

  return {
    createChatCompletion: (body, opts = {}) => new Promise<ChatCompletionResult>((resolve, reject) => {
      const md = metadataFor(service.CreateChatCompletion.path, opts);
      const call = client.CreateChatCompletion({ body_json: JSON.stringify(body), request_id: opts.requestId ?? '' }, md, callOptions(opts),
        (err, res?: CreateChatCompletionResponse) => {
          opts.signal?.removeEventListener('abort', cancel);
          if (err) return reject(opts.signal?.aborted ? opts.signal.reason : fromGrpcError(err));
          try {
            resolve({
              requestId: res!.request_id, completion: parseJson<ChatCompletion>(res!.completion_json), usage: usageOf(res!.usage), cost: costOf(res!.cost), replayed: res!.replayed,
            });
          } catch (parseErr) {
            reject(parseErr);
          }
        });
      const cancel = () => call.cancel();
      onAbort(opts.signal, cancel);
    }),

    streamChatCompletion: (body, opts = {}) => ({
      [Symbol.asyncIterator]: () => streamEvents(client, body, metadataFor(service.StreamChatCompletion.path, opts), callOptions(opts), opts)[Symbol.asyncIterator](),
    }),

    close: () => client.close(),
  };
}

async function* streamEvents(client: GeneratedClient, body: object, md: grpc.Metadata, callOpts: grpc.CallOptions, opts: InferenceCallOptions): AsyncGenerator<ChatStreamEvent> {
  const call = client.StreamChatCompletion({ body_json: JSON.stringify(body), request_id: opts.requestId ?? '' }, md, callOpts);
  const cancel = () => call.cancel();
  onAbort(opts.signal, cancel);
  try {
    for await (const message of call as AsyncIterable<StreamChatCompletionResponse>) {
      const { request_id: requestId, replayed } = message;
      if (message.event === 'chunk_json') yield { type: 'chunk', requestId, replayed, chunk: parseJson<ChatCompletionChunk>(message.chunk_json ?? '') };
      else if (message.event === 'summary') yield { type: 'summary', requestId, replayed, usage: usageOf(message.summary?.usage), cost: costOf(message.summary?.cost) };
    }
  } catch (err) {
    // Aborted by the caller: its own reason, as fetch does, rather than the CANCELLED status it caused.
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw toGatewayError(err);
  } finally {
    opts.signal?.removeEventListener('abort', cancel);
    // A consumer that stopped reading early ends the call (the service bills what was generated).
    call.cancel();
  }
}

function onAbort(signal: AbortSignal | undefined, cancel: () => void): void {
  if (signal?.aborted) cancel();
  else signal?.addEventListener('abort', cancel, { once: true });
}

function parseJson<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new GatewayError('The inference service answered malformed JSON', 500, 'api_error', 'internal_error');
  }
}

const usageOf = (u: InferenceUsage | null | undefined): CallUsage => ({
  promptTokens: u?.prompt_tokens ?? 0, completionTokens: u?.completion_tokens ?? 0, totalTokens: u?.total_tokens ?? 0,
});

const costOf = (c: InferenceCost | null | undefined): CallCost => ({
  priced: c?.priced ?? false, listMicros: c?.list_micros ?? 0, chargedMicros: c?.charged_micros ?? 0,
});
