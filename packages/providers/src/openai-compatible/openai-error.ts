import type { UpstreamErrorDetail } from '../http/upstream-errors';
import { openAIErrorSchema } from './openai-api';

/** Reads `{error: {message, param, code}}` from an upstream error body; empty when the body is not one. */
export function parseOpenAIError(body: string | unknown): UpstreamErrorDetail {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return {};
    }
  }
  const parsed = openAIErrorSchema.safeParse(value);
  if (!parsed.success) return {};
  const { message, param, code } = parsed.data.error;
  return {
    message: message ?? undefined,
    param: param ?? null,
    code: code === null || code === undefined ? null : String(code),
  };
}
