import type { ChatCompletion, ChatCompletionMessage, ChatToolCall, Usage } from '@gw/provider-spec';
import { isTextBlock, isThinkingBlock, isToolUseBlock, type AnthropicMessage } from './anthropic-api';
import type { AnthropicRequest } from './convert-to-anthropic-request';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason';

/** What Anthropic reports for a refusal that came without any text of its own. */
export const DEFAULT_REFUSAL = 'The model declined to answer this request.';

/** Our message plus the thinking text, which the spec's chat types do not name yet. */
export type ChatCompletionMessageWithReasoning = ChatCompletionMessage & { reasoning?: string };

type ReadOptions = Pick<AnthropicRequest, 'jsonToolName' | 'includeReasoning'>;

export function convertAnthropicMessage(res: AnthropicMessage, usage: Usage, opts: ReadOptions): ChatCompletion {
  let text = '';
  let reasoning = '';
  let jsonText: string | undefined;
  const toolCalls: ChatToolCall[] = [];
  for (const block of res.content) {
    if (isTextBlock(block)) text += block.text;
    else if (isThinkingBlock(block)) reasoning += block.thinking;
    else if (isToolUseBlock(block)) {
      const { id, name, input } = block;
      if (name === opts.jsonToolName) jsonText = JSON.stringify(input ?? {});
      else toolCalls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(input ?? {}) } });
    }
    // redacted_thinking and server tool blocks carry nothing the chat format can show.
  }

  const message: ChatCompletionMessageWithReasoning = { role: 'assistant', content: null };
  const refused = res.stop_reason === 'refusal';
  if (refused) message.refusal = text || DEFAULT_REFUSAL;
  else if (jsonText !== undefined) message.content = jsonText;
  else if (text !== '' || toolCalls.length === 0) message.content = text;
  if (toolCalls.length > 0 && !refused) message.tool_calls = toolCalls;
  if (opts.includeReasoning && reasoning !== '') message.reasoning = reasoning;

  return {
    id: res.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: res.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(res.stop_reason, jsonText !== undefined) }],
    usage,
  };
}

/** A forced JSON tool is the answer itself, not a call for the caller to run. */
export function finishReason(stopReason: string | null | undefined, answeredWithJsonTool: boolean) {
  const mapped = mapAnthropicFinishReason(stopReason);
  return mapped === 'tool_calls' && answeredWithJsonTool ? 'stop' : mapped;
}
