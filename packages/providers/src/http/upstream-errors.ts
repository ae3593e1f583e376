import type { IncomingHttpHeaders } from 'node:http';
import {
  GatewayError,
  InputError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  TimeoutError,
  UpstreamError,
} from '@gw/platform';
import { markRetryable, ServerSentEventTooLargeError, type RetryableTag } from '@gw/provider-spec';
import type { Deadline } from './deadline';
import { retryAfterSeconds } from './retry-after';

/** What a provider could read from an upstream error body. */
export interface UpstreamErrorDetail {
  message?: string;
  param?: string | null;
  code?: string | null;
}

export type TaggedError = GatewayError & RetryableTag;

/**
 * Maps a non-2xx upstream answer to the gateway's error (API-NOTES "Errors from providers"). Upstream messages
 * are passed on only for 400-class request problems; others may name the gateway's own provider account.
 */
export function mapUpstreamHttpError(status: number, headers: IncomingHttpHeaders, detail: UpstreamErrorDetail): TaggedError {
  switch (status) {
    case 400:
    case 422:
      return markRetryable(new InputError(detail.message || 'The provider rejected the request', detail.param ?? null, detail.code || 'invalid_request'), false);
    case 413:
      return markRetryable(new PayloadTooLargeError('The request is too large for the provider'), false);
    case 401:
    case 403:
      // The gateway's provider credential failed; never blame the caller's key.
      return markRetryable(new UpstreamError('The provider rejected the gateway credential', status, 'upstream_auth_error'), false);
    case 402:
      return insufficientBalance(status);
    case 404:
      return markRetryable(new NotFoundError('The model was not found at the provider', 'model', 'model_not_found'), false);
    case 408:
    case 504:
      return markRetryable(new TimeoutError(`The provider timed out (HTTP ${status})`), true);
    case 429:
      // OpenAI-style APIs signal an exhausted account as a 429; waiting will not help.
      if (detail.code === 'insufficient_quota') return insufficientBalance(status);
      return markRetryable(new RateLimitError('The provider rate limit was exceeded', retryAfterSeconds(headers)), true);
    default:
      if (status >= 500) return markRetryable(new UpstreamError(`The provider failed (HTTP ${status})`, status), true);
      return markRetryable(new UpstreamError(`The provider answered with unexpected HTTP ${status}`, status), false);
  }
}

function insufficientBalance(status: number): TaggedError {
  return markRetryable(new UpstreamError('The provider account has insufficient balance', status, 'upstream_insufficient_balance'), false);
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Maps a failure while talking to the upstream: typed errors pass through, the caller's cancellation is
 * rethrown as the caller's reason, deadlines become TimeoutError, a stream event past its bound is an oversized
 * answer, anything else is a connection failure.
 */
export function mapTransportError(err: unknown, deadline: Deadline): Error {
  if (err instanceof GatewayError) return err;
  if (err instanceof ServerSentEventTooLargeError) return oversizedUpstreamError('stream event', err.limitBytes);
  if (deadline.timedOut || TIMEOUT_CODES.has(errorCode(err))) {
    return markRetryable(new TimeoutError(`The provider did not answer within ${deadline.timeoutMs} ms`), true);
  }
  if (deadline.cancelledByCaller) return deadline.signal.reason instanceof Error ? deadline.signal.reason : toError(err);
  const code = errorCode(err);
  return markRetryable(new UpstreamError(`Could not reach the provider${code ? ` (${code})` : ''}`), true);
}

/**
 * The error mapper of a batch API call: as the wire format's, but a 404 is the upstream batch or file gone
 * (expired, deleted, another account), not a model the provider does not know.
 */
export function batchCallErrors(mapError: (status: number, headers: IncomingHttpHeaders, bodyText: string) => TaggedError) {
  return (status: number, headers: IncomingHttpHeaders, bodyText: string): TaggedError =>
    status === 404
      ? markRetryable(new NotFoundError('The provider has no such batch or batch file', null, 'upstream_batch_not_found'), false)
      : mapError(status, headers, bodyText);
}

export function malformedUpstreamError(what: string): TaggedError {
  return markRetryable(new UpstreamError(`The provider sent a malformed ${what}`), false);
}

/** An answer (or one event of a stream) over what the gateway reads of one: refused, never read on. */
export function oversizedUpstreamError(what: string, limitBytes: number): TaggedError {
  return markRetryable(new UpstreamError(`The provider sent a ${what} over ${limitBytes} bytes`), false);
}

/** A stream whose body ended before the `what` (answer, response) was finished: a failed call, not a short answer. */
export function unfinishedStreamError(what = 'answer'): TaggedError {
  return markRetryable(new UpstreamError(`The provider stream ended before the ${what} was finished`), true);
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const causeCode = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof causeCode === 'string' ? causeCode : '';
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
