import { InputError } from '@gw/platform';

/**
 * Tool names under the client API's own rule, so a name outside it is a 400 here rather than a call the provider
 * refuses: OpenAI's function names (chat, responses) are 1 to 64 letters, digits, underscores or dashes;
 * the Messages API allows the same characters up to 128.
 */
const NAME_CHARS = /^[a-zA-Z0-9_-]+$/;
export const FUNCTION_NAME_MAX_CHARS = 64;
export const MESSAGES_TOOL_NAME_MAX_CHARS = 128;

/** `name` when it is a valid tool name of at most `maxChars`; otherwise a 400 naming `param`. */
export function checkFunctionName(name: unknown, param: string, maxChars = FUNCTION_NAME_MAX_CHARS): string {
  if (typeof name !== 'string' || name.length === 0) throw new InputError(`${param} is required`, param);
  if (name.length > maxChars || !NAME_CHARS.test(name)) throw new InputError(`${param} must be 1 to ${maxChars} letters, digits, underscores or dashes`, param);
  return name;
}
