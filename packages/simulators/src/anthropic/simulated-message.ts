import { answer, countWords, splitWords } from '../openai/simulated-chat';

/**
 * The Anthropic simulator's deterministic "model", built on the OpenAI simulator's echo answer so both
 * simulators count tokens the same way (words as tokens).
 */

export type SimulatedStopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal' | 'stop_sequence';

export interface SimulatedMessage {
  /** Words of the thinking block, when the request enabled extended thinking. */
  thinkingWords: string[];
  /** Words of the text block; its text is these joined by single spaces. */
  textWords: string[];
  toolUse?: { id: string; name: string; input: Record<string, unknown> };
  stopReason: SimulatedStopReason;
  stopSequence: string | null;
  inputTokens: number;
  outputTokens: number;
}

export interface MessagesBody {
  model: string;
  messages: unknown[];
  max_tokens: number;
  system?: unknown;
  tools?: unknown;
  tool_choice?: unknown;
  thinking?: unknown;
  stop_sequences?: unknown;
  stream?: unknown;
}

export function simulateMessage(body: MessagesBody, ids: { toolUseId: string }): SimulatedMessage {
  const messages = body.system === undefined ? body.messages : [{ role: 'system', content: body.system }, ...body.messages];
  const toolName = chosenToolName(body);
  const echo = answer(messages, { toolName, callId: ids.toolUseId });
  const inputTokens = echo.promptTokens;

  if (body.model === 'sim-refusal') {
    return { thinkingWords: [], textWords: [], stopReason: 'refusal', stopSequence: null, inputTokens, outputTokens: 1 };
  }
  if (echo.toolCall) {
    const input = JSON.parse(echo.toolCall.arguments) as Record<string, unknown>;
    return {
      thinkingWords: [],
      textWords: [],
      toolUse: { id: ids.toolUseId, name: echo.toolCall.name, input },
      stopReason: 'tool_use',
      stopSequence: null,
      inputTokens,
      outputTokens: Math.max(1, countWords(echo.toolCall.arguments)),
    };
  }

  let textWords = echo.words;
  let stopReason: SimulatedStopReason = 'end_turn';
  let stopSequence: string | null = null;
  const stop = firstStopSequence(textWords, body.stop_sequences);
  if (stop) {
    textWords = textWords.slice(0, stop.wordIndex);
    stopReason = 'stop_sequence';
    stopSequence = stop.sequence;
  }

  let thinkingWords = isThinkingEnabled(body.thinking) ? ['Considering:', ...splitWords(echo.words.slice(1).join(' '))] : [];
  // max_tokens caps thinking and text together, as it does upstream.
  if (thinkingWords.length + textWords.length > body.max_tokens) {
    thinkingWords = thinkingWords.slice(0, body.max_tokens);
    textWords = textWords.slice(0, body.max_tokens - thinkingWords.length);
    stopReason = 'max_tokens';
    stopSequence = null;
  }
  return { thinkingWords, textWords, stopReason, stopSequence, inputTokens, outputTokens: thinkingWords.length + textWords.length };
}

/** The tool the simulated model calls: a forced one, or the first tool for `sim-tools`. */
function chosenToolName(body: MessagesBody): string | undefined {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (tools.length === 0) return undefined;
  const choice = body.tool_choice as { type?: unknown; name?: unknown } | null | undefined;
  if (choice?.type === 'tool' && typeof choice.name === 'string') return choice.name;
  if (choice?.type === 'none') return undefined;
  if (choice?.type === 'any' || body.model === 'sim-tools') {
    const name = (tools[0] as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? name : 'tool';
  }
  return undefined;
}

function isThinkingEnabled(thinking: unknown): boolean {
  return (thinking as { type?: unknown } | null | undefined)?.type === 'enabled';
}

function firstStopSequence(words: string[], stopSequences: unknown): { wordIndex: number; sequence: string } | undefined {
  if (!Array.isArray(stopSequences)) return undefined;
  for (let i = 0; i < words.length; i++) {
    for (const sequence of stopSequences) {
      if (typeof sequence === 'string' && sequence !== '' && words[i].includes(sequence)) return { wordIndex: i, sequence };
    }
  }
  return undefined;
}
