import type { IncomingHttpHeaders } from 'node:http';
import { parseErrorBody } from '../http/upstream-json';
import { mapUpstreamHttpError, type TaggedError, type UpstreamErrorDetail } from '../http/upstream-errors';
import { openAIErrorSchema } from './openai-api';

/** Reads `{error: {message, param, code}}` from an upstream error body; empty when the body is not one. */
export function parseOpenAIError(body: string | unknown): UpstreamErrorDetail {
  const parsed = parseErrorBody(body, openAIErrorSchema);
  if (!parsed) return {};
  const { message, param, code } = parsed.error;
  return {
    message: message ?? undefined,
    param: param ?? null,
    code: code === null || code === undefined ? null : String(code),
  };
}

/** Maps a non-2xx answer of an OpenAI-format upstream (API-NOTES "Errors from providers"). */
export function mapOpenAIHttpError(status: number, headers: IncomingHttpHeaders, bodyText: string): TaggedError {
  return mapUpstreamHttpError(status, headers, parseOpenAIError(bodyText));
}
