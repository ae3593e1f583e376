import type { ChatToolCall } from './chat-request';
import type { Usage } from './usage';

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface ChatCompletionMessage {
  role: 'assistant';
  /** null when the turn is only tool calls or a refused structured response. */
  content: string | null;
  refusal?: string | null;
  tool_calls?: ChatToolCall[];
  /** Reasoning text of thinking models, when the caller did not ask to exclude it. */
  reasoning?: string | null;
}

export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  /** null when log probabilities were not requested. */
  logprobs: Record<string, unknown> | null;
  finish_reason: FinishReason;
}

/** Spec: Chat completion. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  /** The model that served the call; may name a provider snapshot. */
  model: string;
  choices: ChatCompletionChoice[];
  usage: Usage;
}

/** A fragment of a tool call; `index` ties fragments of one call together across chunks. */
export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ChatToolCallDelta[];
  reasoning?: string | null;
}

export interface ChatCompletionChunkChoice {
  index: number;
  delta: ChatCompletionDelta;
  logprobs?: Record<string, unknown> | null;
  finish_reason: FinishReason | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  /** Empty on the final usage-only chunk. */
  choices: ChatCompletionChunkChoice[];
  /** Present on the usage chunk when the caller asked for `stream_options.include_usage`. */
  usage?: Usage | null;
}
