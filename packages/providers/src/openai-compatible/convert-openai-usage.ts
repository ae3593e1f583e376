import type { Usage } from '@gw/provider-spec';
import type { OpenAIUsage } from './openai-api';

/** Keeps only the counts the upstream actually reported. */
export function convertOpenAIUsage(usage: OpenAIUsage | null | undefined, providerRequestId: string | undefined): Usage {
  const out: Usage = {};
  if (typeof usage?.prompt_tokens === 'number') out.prompt_tokens = usage.prompt_tokens;
  if (typeof usage?.completion_tokens === 'number') out.completion_tokens = usage.completion_tokens;
  if (typeof usage?.total_tokens === 'number') out.total_tokens = usage.total_tokens;
  if (providerRequestId) out.provider_request_id = providerRequestId;
  return out;
}
