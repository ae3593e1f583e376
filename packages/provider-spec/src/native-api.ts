import type { ChatTarget } from './chat-provider';
import type { Usage } from './usage';

/**
 * Native passthrough APIs (`POST /v1/responses`, `POST /v1/messages`): the body and the answer stay in the
 * provider's own format; the gateway only swaps the model id, injects the credential and reads usage.
 */
export type NativeApi = 'responses' | 'messages';

export interface NativeRequest {
  /** The client's body with `model` already replaced by the provider model id. */
  body: Record<string, unknown>;
  /** Client headers the provider format defines (e.g. `anthropic-version`, `anthropic-beta`), already filtered. */
  headers: Record<string, string>;
}

export interface NativeResponse {
  status: number;
  /** The provider's JSON answer, untouched. */
  body: unknown;
  usage: Usage;
  /** Provider-facing id (`resp_...`, `msg_...`), resolvable by the billing lookup. */
  providerResponseId: string;
  servedModel: string;
}

export interface NativeEvent {
  event?: string;
  data: string;
}

export interface NativeStream {
  /** Server-sent events exactly as the provider sent them (event name and raw data). */
  events: AsyncIterable<NativeEvent>;
  /** Usage seen in the stream so far (complete once iteration ended). */
  usage(): Usage | null;
  providerResponseId(): string;
  servedModel(): string;
}

/** One (native API, upstream) pair. Failures before the first byte are thrown as typed, retry-tagged errors. */
export interface NativeApiTranslator {
  readonly api: NativeApi;
  call(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeResponse>;
  stream(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<NativeStream>;
  /** The prompt's input tokens, counted by the provider; only where its format has a count endpoint (free, nothing generated). */
  countTokens?(req: NativeRequest, target: ChatTarget, signal?: AbortSignal): Promise<number>;
  /** Releases pooled upstream connections. */
  close?(): Promise<void>;
}
