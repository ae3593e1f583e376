import { InputError } from '@gw/platform';
import type { ChatMessage } from '@gw/provider-spec';
import { parseToolArguments } from '../convert/parse-tool-arguments';
import type { GeminiContent, GeminiPart } from './gemini-api';
import { convertUserContent, textOfContent } from './convert-to-gemini-parts';

export interface GeminiPrompt {
  systemInstruction?: { parts: GeminiPart[] };
  contents: GeminiContent[];
}

/**
 * Gemini 3 rejects a replayed function call without the thought signature it was answered with. The chat
 * format has nowhere to carry that signature, so replays use the validator bypass Google documents for
 * histories that were not produced by the same model.
 */
const SIGNATURE_BYPASS = 'skip_thought_signature_validator';

export interface ConvertContentsOptions {
  /** Whether replayed function calls need a thought signature (Gemini 3 models). */
  needsThoughtSignatures?: boolean;
}

/**
 * The chat transcript as Gemini contents: system and developer messages become the system instruction,
 * assistant turns the `model` role, tool results `functionResponse` parts of a `user` turn. Consecutive turns
 * of one role are merged, as Gemini expects strictly alternating roles.
 */
export function convertToGeminiContents(messages: ChatMessage[], options: ConvertContentsOptions = {}): GeminiPrompt {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();

  const push = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((m, i) => {
    const param = `messages[${i}]`;
    const role: string = m.role;
    switch (role) {
      case 'system':
      case 'developer':
        system.push({ text: textOfContent(m.content, `${param}.content`) });
        break;
      case 'user':
        push('user', convertUserContent(m.content, `${param}.content`));
        break;
      case 'assistant':
        push('model', convertAssistant(m, param, toolNames, options.needsThoughtSignatures === true));
        break;
      case 'tool': {
        const name = m.tool_call_id === undefined ? undefined : toolNames.get(m.tool_call_id);
        if (!name) throw new InputError('tool_call_id does not match a tool call of an earlier assistant message', `${param}.tool_call_id`);
        const text = textOfContent(m.content, `${param}.content`);
        push('user', [{ functionResponse: { name, response: { content: text } } }]);
        break;
      }
      default:
        throw new InputError(`Messages with role "${role}" are not supported by this provider`, `${param}.role`);
    }
  });

  if (contents.length === 0) throw new InputError('At least one user or assistant message is required', 'messages');
  return system.length > 0 ? { systemInstruction: { parts: system }, contents } : { contents };
}

function convertAssistant(m: ChatMessage, param: string, toolNames: Map<string, string>, needsSignatures: boolean): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const text = textOfContent(m.content, `${param}.content`);
  if (text !== '') parts.push({ text });
  (m.tool_calls ?? []).forEach((call, j) => {
    const callParam = `${param}.tool_calls[${j}]`;
    toolNames.set(call.id, call.function.name);
    const part: GeminiPart = { functionCall: { name: call.function.name, args: parseToolArguments(call.function.arguments, `${callParam}.function.arguments`) } };
    // Only the first call of a step carries a signature (parallel calls share it).
    if (needsSignatures && j === 0) part.thoughtSignature = SIGNATURE_BYPASS;
    parts.push(part);
  });
  return parts;
}
