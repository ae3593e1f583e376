import type { Usage } from '@gw/provider-spec';
import type { GeminiUsageMetadata } from './gemini-api';

/**
 * Gemini counts thinking apart from the answer; both are billed as output, so completion_tokens is their sum.
 * Keeps only the counts the upstream actually reported.
 */
export function convertGeminiUsage(usage: GeminiUsageMetadata | null | undefined, providerRequestId: string | undefined): Usage {
  const out: Usage = {};
  if (typeof usage?.promptTokenCount === 'number') out.prompt_tokens = usage.promptTokenCount;
  const candidates = usage?.candidatesTokenCount;
  const thoughts = usage?.thoughtsTokenCount;
  if (typeof candidates === 'number' || typeof thoughts === 'number') out.completion_tokens = (candidates ?? 0) + (thoughts ?? 0);
  if (typeof usage?.totalTokenCount === 'number') out.total_tokens = usage.totalTokenCount;
  if (providerRequestId) out.provider_request_id = providerRequestId;
  return out;
}
