import { newId } from '@gw/platform';
import type { ChatCompletion, ChatCompletionChoice, ChatCompletionMessage, ChatToolCall, Usage } from '@gw/provider-spec';
import type { GeminiCandidate, GeminiResponse } from './gemini-api';
import { convertGeminiLogprobs } from './convert-gemini-logprobs';
import { geminiRefusalText, isGeminiRefusal, mapGeminiFinishReason } from './map-gemini-finish-reason';

/**
 * The assistant message plus the thought summary, as `reasoning` (OpenRouter's field for it): thoughts are
 * never mixed into `content`.
 */
export type GeminiChatMessage = ChatCompletionMessage & { reasoning?: string };

/** What one candidate's parts say, split by kind. */
export interface CandidateParts {
  text: string;
  reasoning: string;
  toolCalls: ChatToolCall[];
}

export function readCandidateParts(candidate: GeminiCandidate): CandidateParts {
  const out: CandidateParts = { text: '', reasoning: '', toolCalls: [] };
  for (const part of candidate.content?.parts ?? []) {
    if (part.functionCall) {
      out.toolCalls.push({
        id: newId('call_'),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (typeof part.text === 'string') {
      if (part.thought === true) out.reasoning += part.text;
      else out.text += part.text;
    }
  }
  return out;
}

/** A request Gemini refused to answer at all: one refused choice, as OpenAI reports a refused request. */
export function blockedPromptChoice(blockReason: string): ChatCompletionChoice {
  return {
    index: 0,
    message: { role: 'assistant', content: null, refusal: geminiRefusalText(blockReason, 'prompt') },
    logprobs: null,
    finish_reason: 'stop',
  };
}

export function convertGeminiResponse(res: GeminiResponse, usage: Usage, fallbackModel: string): ChatCompletion {
  const candidates = res.candidates ?? [];
  const blockReason = res.promptFeedback?.blockReason;
  const choices =
    candidates.length === 0 && blockReason
      ? [blockedPromptChoice(blockReason)]
      : candidates.map((c, position) => convertCandidate(c, position)).sort((a, b) => a.index - b.index);
  return {
    id: res.responseId || newId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: res.modelVersion || fallbackModel,
    choices,
    usage,
  };
}

function convertCandidate(candidate: GeminiCandidate, position: number): ChatCompletionChoice {
  const parts = readCandidateParts(candidate);
  const hasToolCalls = parts.toolCalls.length > 0;
  const message: GeminiChatMessage = { role: 'assistant', content: parts.text === '' && hasToolCalls ? null : parts.text };
  if (isGeminiRefusal(candidate.finishReason)) {
    message.content = null;
    message.refusal = geminiRefusalText(candidate.finishReason as string, 'response');
  }
  if (parts.reasoning !== '') message.reasoning = parts.reasoning;
  if (hasToolCalls) message.tool_calls = parts.toolCalls;
  return {
    index: candidate.index ?? position,
    message,
    logprobs: convertGeminiLogprobs(candidate.logprobsResult),
    finish_reason: mapGeminiFinishReason(candidate.finishReason, hasToolCalls),
  };
}
