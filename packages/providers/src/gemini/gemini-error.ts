import type { IncomingHttpHeaders } from 'node:http';
import { UpstreamError } from '@gw/platform';
import { markRetryable } from '@gw/provider-spec';
import { mapUpstreamHttpError, type TaggedError } from '../http/upstream-errors';
import { parseErrorBody } from '../http/upstream-json';
import { geminiErrorSchema } from './gemini-api';

/** What Google's `{error: {code, message, status, details}}` body says; empty fields when the body is not one. */
export interface GeminiErrorDetail {
  message?: string;
  /** Google's canonical status, e.g. `INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`. */
  status?: string;
  /** The HTTP status Google put into the body (the only status an in-stream error has). */
  code?: number;
  /** `ErrorInfo.reason`, e.g. `API_KEY_INVALID`. */
  reason?: string;
  /** `RetryInfo.retryDelay` in whole seconds, rounded up. */
  retryDelaySeconds?: number;
}

export function parseGeminiError(body: string | unknown): GeminiErrorDetail {
  const parsed = parseErrorBody(body, geminiErrorSchema);
  if (!parsed) return {};
  const { code, message, status, details } = parsed.error;
  const out: GeminiErrorDetail = {};
  if (message) out.message = message;
  if (status) out.status = status;
  if (typeof code === 'number') out.code = code;
  for (const detail of details ?? []) {
    if (detail.reason) out.reason = detail.reason;
    const delay = detail.retryDelay ? parseDuration(detail.retryDelay) : undefined;
    if (delay !== undefined) out.retryDelaySeconds = delay;
  }
  return out;
}

/**
 * Maps a Gemini failure onto the shared upstream mapping (API-NOTES "Errors from providers"), after the two
 * places where Gemini's statuses mislead: a bad API key is a 400 INVALID_ARGUMENT (it is the gateway's
 * credential, not the caller's request), and a 400 FAILED_PRECONDITION is the gateway's account (region,
 * billing), which the caller cannot fix either. Retry-After comes from the header, else from RetryInfo.
 */
export function mapGeminiHttpError(status: number, headers: IncomingHttpHeaders, detail: GeminiErrorDetail): TaggedError {
  if (detail.reason === 'API_KEY_INVALID' || detail.status === 'UNAUTHENTICATED') return mapUpstreamHttpError(401, headers, {});
  if (status === 400 && detail.status === 'FAILED_PRECONDITION') {
    return markRetryable(new UpstreamError('The provider cannot serve the gateway account (FAILED_PRECONDITION)', status), false);
  }
  let effectiveHeaders = headers;
  if (status === 429 && headers['retry-after'] === undefined && detail.retryDelaySeconds !== undefined) {
    effectiveHeaders = { ...headers, 'retry-after': String(detail.retryDelaySeconds) };
  }
  // Gemini names no parameter and its codes are statuses, not OpenAI-style codes: pass only the message.
  return mapUpstreamHttpError(status, effectiveHeaders, { message: detail.message, param: null, code: null });
}

/** A protobuf Duration in JSON: seconds with an `s` suffix, e.g. `"34.4s"`. */
function parseDuration(value: string): number | undefined {
  if (!value.endsWith('s')) return undefined;
  const seconds = Number(value.slice(0, -1));
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}
