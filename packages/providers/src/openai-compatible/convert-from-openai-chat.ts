import type { ChatCompletion, ChatCompletionChunk, ChatToolCall, Usage } from '@gw/provider-spec';
import type { OpenAIChatChunk, OpenAIChatResponse } from './openai-api';
import { mapOpenAIFinishReason } from './map-openai-finish-reason';

export function convertOpenAIChatResponse(res: OpenAIChatResponse, usage: Usage): ChatCompletion {
  return {
    id: res.id,
    object: 'chat.completion',
    created: res.created,
    model: res.model,
    choices: res.choices.map((choice) => {
      const { content, refusal, tool_calls } = choice.message;
      const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: content ?? null };
      if (refusal) message.refusal = refusal;
      if (tool_calls && tool_calls.length > 0) {
        message.tool_calls = tool_calls.map(
          (call): ChatToolCall => ({ id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }),
        );
      }
      return {
        index: choice.index,
        message,
        logprobs: choice.logprobs ?? null,
        finish_reason: mapOpenAIFinishReason(choice.finish_reason),
      };
    }),
    usage,
  };
}

/** The chunk without usage; the stream translator decides whether and which usage the caller sees. */
export function convertOpenAIChatChunk(chunk: OpenAIChatChunk): ChatCompletionChunk {
  return {
    id: chunk.id,
    object: 'chat.completion.chunk',
    created: chunk.created,
    model: chunk.model,
    choices: chunk.choices.map((choice) => {
      const delta: ChatCompletionChunk['choices'][number]['delta'] = {};
      const d = choice.delta;
      if (d?.role === 'assistant') delta.role = 'assistant';
      if (d?.content !== undefined) delta.content = d.content;
      if (d?.refusal) delta.refusal = d.refusal;
      if (d?.tool_calls && d.tool_calls.length > 0) {
        delta.tool_calls = d.tool_calls.map((call) => {
          const out: NonNullable<typeof delta.tool_calls>[number] = { index: call.index };
          if (call.id) out.id = call.id;
          if (call.type) out.type = call.type;
          if (call.function) {
            out.function = {};
            if (typeof call.function.name === 'string') out.function.name = call.function.name;
            if (typeof call.function.arguments === 'string') out.function.arguments = call.function.arguments;
          }
          return out;
        });
      }
      const out: ChatCompletionChunk['choices'][number] = {
        index: choice.index,
        delta,
        finish_reason: choice.finish_reason ? mapOpenAIFinishReason(choice.finish_reason) : null,
      };
      if (choice.logprobs) out.logprobs = choice.logprobs;
      return out;
    }),
  };
}
