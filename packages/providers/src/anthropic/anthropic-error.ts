import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError } from '@gw/platform';
import { markRetryable } from '@gw/provider-spec';
import { mapUpstreamHttpError, type TaggedError, type UpstreamErrorDetail } from '../http/upstream-errors';
import { parseErrorBody } from '../http/upstream-json';
import { anthropicErrorSchema, type AnthropicError } from './anthropic-api';

export interface AnthropicErrorDetail extends UpstreamErrorDetail {
  /** Anthropic's `error.type`, e.g. `overloaded_error`. */
  type?: string;
}

/** The HTTP status Anthropic documents for each error type; used for errors that arrive inside a stream. */
export const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Reads `{type: 'error', error: {type, message}}`; empty when the body is not one. */
export function parseAnthropicError(body: string | unknown): AnthropicErrorDetail {
  const parsed = parseErrorBody(body, anthropicErrorSchema);
  return parsed ? anthropicErrorDetail(parsed.error) : {};
}

/** The `error` object of an error body or of an in-stream `error` event. */
export function anthropicErrorDetail(error: AnthropicError['error']): AnthropicErrorDetail {
  // Anthropic names no parameter and has no error code beyond the type.
  return { message: error.message ?? undefined, param: null, code: null, type: error.type ?? undefined };
}

/** Maps a non-2xx answer (API-NOTES "Errors from providers"); 529 overloaded is an ordinary retryable 5xx. */
export function mapAnthropicHttpError(status: number, headers: IncomingHttpHeaders, bodyText: string): TaggedError {
  const detail = parseAnthropicError(bodyText);
  if (isExhaustedCredit(detail)) return mapUpstreamHttpError(402, headers, detail);
  return mapUpstreamHttpError(status, headers, detail);
}

/** An `event: error` inside a stream, after the first byte: typed like the HTTP answer of the same type. */
export function mapAnthropicStreamError(detail: AnthropicErrorDetail): TaggedError {
  const status = STATUS_OF_ERROR_TYPE[detail.type ?? ''] ?? 500;
  if (status >= 500 && status !== 504) {
    const err = new UpstreamError(`The provider reported an error mid-stream (${detail.type ?? 'unknown'})`, status);
    return markRetryable(err, true);
  }
  return mapUpstreamHttpError(status, {}, detail);
}

/**
 * Anthropic reports an exhausted prepaid balance as a 400 invalid_request_error; passed on as such it would
 * blame the caller's request for the gateway's own provider account.
 */
function isExhaustedCredit(detail: AnthropicErrorDetail): boolean {
  return detail.type === 'billing_error' || (detail.message?.toLowerCase().includes('credit balance is too low') ?? false);
}
