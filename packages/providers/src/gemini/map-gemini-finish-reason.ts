import type { FinishReason } from '@gw/provider-spec';

/** Gemini stopped the candidate on its content policy; the caller gets a refusal instead of text. */
const REFUSAL_REASONS = new Set(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'IMAGE_SAFETY']);

/**
 * The spec knows only stop, length and tool_calls. Gemini reports STOP also after a function call, so the
 * parts decide between stop and tool_calls; every other reason ended the answer as far as the caller can act.
 */
export function mapGeminiFinishReason(reason: string | null | undefined, hasFunctionCall: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (isGeminiRefusal(reason)) return 'stop';
  return hasFunctionCall ? 'tool_calls' : 'stop';
}

export function isGeminiRefusal(reason: string | null | undefined): boolean {
  return typeof reason === 'string' && REFUSAL_REASONS.has(reason);
}

export function geminiRefusalText(reason: string, what: 'response' | 'prompt'): string {
  return `The provider blocked the ${what} (${reason}).`;
}
