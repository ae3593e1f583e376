import { countWords, messageText, splitWords } from '../openai/simulated-chat';

/**
 * The Gemini simulator's deterministic "model", with the same rules as the OpenAI simulator's (echo the last
 * user text, words as tokens) so tests and benchmarks predict both alike.
 */

export interface SimulatedGeminiAnswer {
  /** Answer words; the text is these joined by single spaces. */
  words: string[];
  functionCall?: { name: string; args: Record<string, unknown> };
  finishReason: 'STOP' | 'MAX_TOKENS' | 'SAFETY';
  /** The thought summary, sent only when the request asked for thoughts. */
  thought?: string;
  thoughtsTokens: number;
  promptTokens: number;
  /** Answer tokens of one candidate. */
  candidateTokens: number;
  candidateCount: number;
  /** Alternatives per step when log probabilities were asked for (0 = chosen tokens only). */
  topLogprobs?: number;
}

export interface GeminiRequestBody {
  contents: Array<{ role?: unknown; parts?: unknown }>;
  systemInstruction?: { parts?: unknown } | null;
  tools?: Array<{ functionDeclarations?: Array<{ name?: unknown }> }> | null;
  generationConfig?: {
    maxOutputTokens?: unknown;
    candidateCount?: unknown;
    responseMimeType?: unknown;
    responseLogprobs?: unknown;
    logprobs?: unknown;
    thinkingConfig?: { thinkingBudget?: unknown; includeThoughts?: unknown } | null;
  } | null;
}

export interface SimulationKnobs {
  /** Answer with a call of the first declared function (model `sim-tools`). */
  callTools: boolean;
  /** Block the answer with finishReason SAFETY (model `sim-refusal`). */
  refuse: boolean;
}

export function simulateGeminiAnswer(body: GeminiRequestBody, knobs: SimulationKnobs): SimulatedGeminiAnswer {
  const config = body.generationConfig ?? {};
  let promptTokens = countWords(messageText(body.systemInstruction?.parts));
  let lastUser = '';
  for (const content of body.contents) {
    const text = messageText(content.parts);
    promptTokens += countWords(text);
    if (content.role === 'user' && text !== '') lastUser = text;
  }
  const base = {
    promptTokens: Math.max(1, promptTokens),
    candidateCount: positiveInt(config.candidateCount) ?? 1,
    topLogprobs: config.responseLogprobs === true ? (positiveInt(config.logprobs) ?? 0) : undefined,
    ...thinking(config.thinkingConfig, lastUser),
  };

  if (knobs.refuse) return { ...base, words: [], finishReason: 'SAFETY', candidateTokens: 0 };
  const functionName = knobs.callTools ? firstFunctionName(body.tools) : undefined;
  if (functionName !== undefined) {
    const args = { query: lastUser };
    return { ...base, words: [], functionCall: { name: functionName, args }, finishReason: 'STOP', candidateTokens: Math.max(1, countWords(JSON.stringify(args))) };
  }

  const text = config.responseMimeType === 'application/json' ? JSON.stringify({ echo: lastUser }) : `Echo: ${lastUser}`;
  let words = splitWords(text);
  let finishReason: SimulatedGeminiAnswer['finishReason'] = 'STOP';
  const maxTokens = positiveInt(config.maxOutputTokens);
  if (maxTokens !== undefined && words.length > maxTokens) {
    words = words.slice(0, maxTokens);
    finishReason = 'MAX_TOKENS';
  }
  return { ...base, words, finishReason, candidateTokens: words.length };
}

/** Thinks only when asked to (a non-zero budget or includeThoughts), so plain calls stay predictable. */
function thinking(config: { thinkingBudget?: unknown; includeThoughts?: unknown } | null | undefined, lastUser: string): { thought?: string; thoughtsTokens: number } {
  if (!config || config.thinkingBudget === 0 || (config.thinkingBudget === undefined && config.includeThoughts !== true)) return { thoughtsTokens: 0 };
  const thought = `Thinking about: ${lastUser}`;
  return { thoughtsTokens: countWords(thought), ...(config.includeThoughts === true ? { thought } : {}) };
}

function firstFunctionName(tools: GeminiRequestBody['tools']): string | undefined {
  for (const tool of tools ?? []) {
    const name = tool.functionDeclarations?.[0]?.name;
    if (typeof name === 'string') return name;
  }
  return undefined;
}

function positiveInt(value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 1 ? (value as number) : undefined;
}
