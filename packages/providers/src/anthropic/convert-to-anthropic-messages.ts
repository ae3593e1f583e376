import { InputError } from '@gw/platform';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '@gw/provider-spec';
import { parseToolArguments } from '../convert/parse-tool-arguments';

/** One Anthropic content block; built here from our parts, or passed on as the caller gave it. */
export type AnthropicBlock = { type: string } & Record<string, unknown>;

export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

export interface AnthropicPrompt {
  system?: string | AnthropicBlock[];
  messages: AnthropicMessageParam[];
}

/**
 * Chat messages -> Anthropic's top-level `system` plus alternating user/assistant turns. System and
 * developer messages are hoisted in order; tool results become user turns; consecutive turns of one role
 * are merged, because Anthropic expects roles to alternate.
 */
export function convertToAnthropicMessages(messages: ChatMessage[]): AnthropicPrompt {
  const system: AnthropicBlock[] = [];
  const turns: Array<{ role: 'user' | 'assistant'; content: AnthropicBlock[] }> = [];
  const push = (role: 'user' | 'assistant', blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };

  messages.forEach((m, i) => {
    const path = `messages[${i}]`;
    switch (m.role as string) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(m.content, `${path}.content`));
        break;
      case 'user':
        push('user', userBlocks(m.content, `${path}.content`));
        break;
      case 'assistant':
        push('assistant', [...textBlocks(m.content, `${path}.content`), ...toolUseBlocks(m.tool_calls ?? [], `${path}.tool_calls`)]);
        break;
      case 'tool':
        push('user', [toolResultBlock(m, path)]);
        break;
      default:
        throw new InputError(`Unsupported message role "${m.role}"`, `${path}.role`);
    }
  });

  if (turns.length === 0) throw new InputError('At least one user or assistant message is required', 'messages');
  const prompt: AnthropicPrompt = { messages: turns.map((t) => ({ role: t.role, content: collapse(t.content) })) };
  if (system.length > 0) prompt.system = system.every(isPlainText) ? system.map((b) => b.text).join('\n\n') : system;
  return prompt;
}

function isPlainText(block: AnthropicBlock): block is AnthropicBlock & { text: string } {
  return block.type === 'text' && typeof block.text === 'string' && Object.keys(block).length === 2;
}

/** A turn that is one plain text block is sent as a string, the form most requests use. */
function collapse(blocks: AnthropicBlock[]): string | AnthropicBlock[] {
  return blocks.length === 1 && isPlainText(blocks[0]) ? blocks[0].text : blocks;
}

/** Text-only content (system, assistant). Empty text is skipped: Anthropic rejects empty text blocks. */
function textBlocks(content: ChatMessage['content'], path: string): AnthropicBlock[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.flatMap((part, j) => {
    if (part.type !== 'text') throw new InputError(`Content parts of type "${part.type}" are not supported here`, `${path}[${j}].type`);
    const block = textPart(part, `${path}[${j}]`);
    return block.text === '' ? [] : [block];
  });
}

function userBlocks(content: ChatMessage['content'], path: string): AnthropicBlock[] {
  if (content === null || content === undefined) throw new InputError('User message content is required', path);
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, j) => convertPart(part, `${path}[${j}]`));
}

function convertPart(part: ChatContentPart, path: string): AnthropicBlock {
  switch (part.type) {
    case 'text':
      return textPart(part, path);
    case 'image_url':
      return imageBlock(part, path);
    default:
      // Spec: other part types are passed on as given (e.g. Anthropic-native `document` blocks).
      return part as AnthropicBlock;
  }
}

function textPart(part: ChatContentPart, path: string): AnthropicBlock & { text: string } {
  const { text, cache_control } = part as { text?: unknown; cache_control?: unknown };
  if (typeof text !== 'string') throw new InputError('A text part needs a string "text"', `${path}.text`);
  // cache_control is Anthropic's prompt-caching marker; clients that know it put it on text parts.
  return cache_control === undefined ? { type: 'text', text } : { type: 'text', text, cache_control };
}

function imageBlock(part: ChatContentPart, path: string): AnthropicBlock {
  const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
  const urlPath = `${path}.image_url.url`;
  if (typeof url !== 'string') throw new InputError('An image_url part needs a string "url"', urlPath);
  const scheme = url.slice(0, url.indexOf(':') + 1).toLowerCase();
  if (scheme === 'http:' || scheme === 'https:') return { type: 'image', source: { type: 'url', url } };
  if (scheme !== 'data:') throw new InputError('Image URLs must be http(s) or base64 data URLs', urlPath);
  const comma = url.indexOf(',');
  const header = comma < 0 ? '' : url.slice('data:'.length, comma);
  if (!header.toLowerCase().endsWith(';base64')) throw new InputError('Image data URLs must be base64-encoded', urlPath);
  return { type: 'image', source: { type: 'base64', media_type: header.slice(0, -';base64'.length), data: url.slice(comma + 1) } };
}

function toolUseBlocks(calls: ChatToolCall[], path: string): AnthropicBlock[] {
  return calls.map((call, j) => {
    if (call.type !== 'function') throw new InputError(`Tool calls of type "${call.type}" are not supported`, `${path}[${j}].type`);
    return { type: 'tool_use', id: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments, `${path}[${j}].function.arguments`) };
  });
}

function toolResultBlock(m: ChatMessage, path: string): AnthropicBlock {
  if (!m.tool_call_id) throw new InputError('A tool message needs the tool_call_id it answers', `${path}.tool_call_id`);
  const content = typeof m.content === 'string' || m.content === null ? (m.content ?? '') : m.content.map((part, j) => convertPart(part, `${path}.content[${j}]`));
  return { type: 'tool_result', tool_use_id: m.tool_call_id, content };
}
