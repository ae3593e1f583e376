import type { Usage } from '@gw/provider-spec';
import type { AnthropicUsage } from './anthropic-api';

/**
 * Anthropic's `input_tokens` excludes cached input: cache writes and reads are counted separately, yet all
 * three are prompt the caller sent. Keeps only the counts the upstream actually reported.
 */
export function convertAnthropicUsage(usage: AnthropicUsage | null | undefined, providerRequestId: string | undefined): Usage {
  const out: Usage = {};
  const inputParts = [usage?.input_tokens, usage?.cache_creation_input_tokens, usage?.cache_read_input_tokens].filter(
    (n): n is number => typeof n === 'number',
  );
  if (inputParts.length > 0) out.prompt_tokens = inputParts.reduce((sum, n) => sum + n, 0);
  if (typeof usage?.output_tokens === 'number') out.completion_tokens = usage.output_tokens;
  if (out.prompt_tokens !== undefined && out.completion_tokens !== undefined) out.total_tokens = out.prompt_tokens + out.completion_tokens;
  if (providerRequestId) out.provider_request_id = providerRequestId;
  return out;
}

/**
 * A stream reports usage twice: `message_start` carries the input counts (and a placeholder output count),
 * `message_delta` the final output count and, on newer API versions, the cumulative input counts again.
 * Later non-null counts win.
 */
export class AnthropicStreamUsage {
  private merged: AnthropicUsage | null = null;

  add(usage: AnthropicUsage | null | undefined): void {
    if (!usage) return;
    const next: AnthropicUsage = { ...this.merged };
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
      if (typeof usage[key] === 'number') next[key] = usage[key];
    }
    this.merged = next;
  }

  current(providerRequestId: string | undefined): Usage | null {
    return this.merged ? convertAnthropicUsage(this.merged, providerRequestId) : null;
  }
}
