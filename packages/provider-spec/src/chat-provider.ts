import type { ChatCapabilities } from './chat-capabilities';
import type { ChatCompletion, ChatCompletionChunk } from './chat-completion';
import type { ChatCompletionRequest } from './chat-request';
import type { Usage } from './usage';

/** Where and how to call one upstream model; resolved by routing before the provider is called. */
export interface ChatTarget {
  /** Up to and including the API version prefix, e.g. `https://api.example.com/v1`. */
  baseUrl: string;
  apiKey?: string;
  /** The upstream's model id; replaces the public `model` of the request. */
  providerModel: string;
  extraHeaders?: Record<string, string>;
  /** Query-versioned APIs (Azure OpenAI `api-version`). */
  apiVersion?: string;
  /** Whole-call deadline for non-streaming calls; for streams, the wait for headers and the longest gap between chunks. */
  timeoutMs: number;
  /**
   * Set for a call that may be made again for the same request (an async job re-run after its worker died):
   * the same key on every attempt. Wire formats whose upstream deduplicates on a key send it; others ignore it.
   */
  idempotencyKey?: string;
}

export interface ChatStream {
  chunks: AsyncIterable<ChatCompletionChunk>;
  /** The usage reported in the stream, once iteration has ended; null if the upstream sent none. */
  usage(): Usage | null;
}

/**
 * One upstream wire format. Failures are thrown as the platform's typed errors, tagged with
 * `retryable` (see isRetryableUpstreamError).
 */
export interface ChatProvider {
  readonly kind: string;
  /** What this wire format can honour; routing sends a request only where every set parameter is honoured. */
  readonly capabilities: ChatCapabilities;
  chat(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<{ completion: ChatCompletion; usage: Usage }>;
  /**
   * Resolves once the upstream answered with 2xx headers, so a failure before the first byte is a thrown
   * typed error; a failure after it ends the iteration with a thrown typed error.
   */
  chatStream(req: ChatCompletionRequest, target: ChatTarget, signal?: AbortSignal): Promise<ChatStream>;
  /** Releases pooled upstream connections. */
  close?(): Promise<void>;
}
