import type { ChatCapabilities } from './chat-capabilities';
import type { ChatCompletion } from './chat-completion';
import type { ChatTarget } from './chat-provider';
import type { ChatCompletionRequest } from './chat-request';
import type { Usage } from './usage';

/**
 * A provider's own batch API (upload the lines, let the provider run them within its completion window, read
 * the results), behind one provider-free interface. Failures of the calls themselves (submit, poll, cancel,
 * reading results) are the platform's typed errors tagged with `retryable` (see isRetryableUpstreamError),
 * as chat calls are; a line that failed inside an upstream batch is a result, never a thrown error.
 */

/**
 * The key of one line, sent upstream as its custom id. Batch APIs restrict it (Anthropic: 1 to 64 characters
 * of letters, digits, `_` and `-`), so the caller gives each line a key of that form (e.g. `line-42`) and keeps
 * the client's own `custom_id` itself.
 */
export const NATIVE_BATCH_LINE_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function isNativeBatchLineKey(key: string): boolean {
  return NATIVE_BATCH_LINE_KEY_PATTERN.test(key);
}

export interface NativeBatchLine {
  /** See NATIVE_BATCH_LINE_KEY_PATTERN; unique within the batch. */
  custom_id: string;
  /** The gateway's chat request; its `model` is replaced by the target's provider model. */
  request: ChatCompletionRequest;
}

/**
 * What identifies a submitted upstream batch. JSON-serializable: the caller stores it as given and passes it
 * back to poll, cancel and read results, from any process, after any restart.
 */
export interface NativeBatchHandle {
  /** The upstream batch id (`batch_...`, `msgbatch_...`). */
  id: string;
  /** What this wire format needs later to read results back as the chat adapter would (e.g. how a JSON answer was asked for). */
  context: Record<string, unknown>;
}

/**
 * The upstream batch's state, normalized: `validating`, `in_progress` and `finalizing` are all `in_progress`.
 * Terminal: `completed`, `failed`, `expired`, `cancelled`.
 */
export type NativeBatchStatus = 'in_progress' | 'cancelling' | 'completed' | 'failed' | 'expired' | 'cancelled';

export const NATIVE_BATCH_TERMINAL_STATUSES: ReadonlySet<NativeBatchStatus> = new Set(['completed', 'failed', 'expired', 'cancelled']);

export function isTerminalNativeBatchStatus(status: NativeBatchStatus): boolean {
  return NATIVE_BATCH_TERMINAL_STATUSES.has(status);
}

export interface NativeBatchCounts {
  total: number;
  /** Lines answered successfully so far. */
  succeeded: number;
  /** Lines that errored, expired or were cancelled so far. */
  failed: number;
}

export interface NativeBatchState {
  status: NativeBatchStatus;
  /** The provider's own status word, for logs and error messages. */
  upstreamStatus: string;
  /** null when the provider reported none yet. */
  counts: NativeBatchCounts | null;
  /**
   * Set once the batch is terminal and has results to read (completed, expired, cancelled; a batch that failed
   * as a whole has none). Lines the results do not name never ran: the caller settles them by the status
   * (`batch_expired`, `batch_cancelled`, or the batch's `error`).
   */
  hasResults: boolean;
  /** Why the batch failed as a whole (validation, upstream refusal); null otherwise. */
  error: NativeBatchError | null;
}

export interface NativeBatchError {
  /** e.g. `batch_expired`, `batch_cancelled`, `invalid_request_error`, `rate_limit_exceeded`. */
  code: string;
  message: string;
  /** The HTTP status the provider gave this line or batch, when it gave one. */
  upstreamStatus?: number;
}

/** One line's outcome, keyed by the `custom_id` it was submitted under. */
export type NativeBatchLineResult =
  | {
      custom_id: string;
      outcome: 'succeeded';
      /** In the gateway's normalized shape, mapped by the same mapper the chat adapter uses. */
      completion: ChatCompletion;
      usage: Usage;
      /** Provider-facing id of the answer (`chatcmpl-...`, `msg_...`), resolvable by the billing lookup. */
      providerResponseId: string;
    }
  | {
      custom_id: string;
      outcome: 'errored' | 'expired' | 'cancelled';
      error: NativeBatchError;
    };

export interface NativeBatchSubmitOptions {
  /** The gateway's batch id, sent where the wire format keeps metadata (for finding the batch upstream). */
  gatewayBatchId?: string;
  /** Same key on every attempt of one submit; sent where the upstream deduplicates on a key. */
  idempotencyKey?: string;
}

/**
 * One upstream batch wire format. `target` is the deployment's target, as for chat (`providerModel` replaces
 * each line's model; `timeoutMs` bounds each call, and each gap while reading results).
 */
export interface NativeBatchProvider {
  readonly kind: string;
  /** What the lines may ask for: the same as the wire format's chat adapter. */
  readonly capabilities: ChatCapabilities;
  /**
   * Throws the InputError a line would get at submit (an unsupported parameter, a value out of the provider's
   * range), without calling anyone: for validating a file before choosing provider execution.
   */
  checkLine(request: ChatCompletionRequest, providerModel: string): void;
  /**
   * Uploads `lines` (streamed: never held whole) and creates the upstream batch. A line that cannot be
   * converted throws its InputError (param prefixed with the line's custom_id) before the batch is created.
   */
  submit(lines: AsyncIterable<NativeBatchLine> | Iterable<NativeBatchLine>, target: ChatTarget, options?: NativeBatchSubmitOptions, signal?: AbortSignal): Promise<NativeBatchHandle>;
  poll(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): Promise<NativeBatchState>;
  /** Asks the upstream to cancel; returns the state it answered (normally `cancelling`). A terminal batch is left as it is. */
  cancel(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): Promise<NativeBatchState>;
  /**
   * The results of a terminal batch (`hasResults`), read line by line as the provider sends them: the caller
   * may stop early, and may read them again (after a restart) from the start.
   */
  results(handle: NativeBatchHandle, target: ChatTarget, signal?: AbortSignal): AsyncIterable<NativeBatchLineResult>;
  /** Releases pooled upstream connections. */
  close?(): Promise<void>;
}
