import type { GeminiLogprobsResult } from './gemini-api';

export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

/** OpenAI's `choices[].logprobs`: one entry per chosen token, with the alternatives Gemini ranked at that step. */
export function convertGeminiLogprobs(result: GeminiLogprobsResult | null | undefined): { content: Array<TokenLogprob & { top_logprobs: TokenLogprob[] }> } | null {
  const chosen = result?.chosenCandidates;
  if (!chosen || chosen.length === 0) return null;
  const top = result?.topCandidates ?? [];
  return {
    content: chosen.map((candidate, step) => ({
      ...tokenLogprob(candidate),
      top_logprobs: (top[step]?.candidates ?? []).map(tokenLogprob),
    })),
  };
}

function tokenLogprob(candidate: { token?: string | null; logProbability?: number | null }): TokenLogprob {
  const token = candidate.token ?? '';
  return { token, logprob: candidate.logProbability ?? 0, bytes: [...Buffer.from(token, 'utf8')] };
}
