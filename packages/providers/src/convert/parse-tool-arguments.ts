import { InputError } from '@gw/platform';

/**
 * A tool call's arguments (JSON text in the chat format) as the object the Anthropic and Gemini formats take;
 * empty text is no arguments. Anything but a JSON object is the caller's 400, naming `param`.
 */
export function parseToolArguments(text: string, param: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InputError('Tool call arguments must be a JSON object', param);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InputError('Tool call arguments must be a JSON object', param);
  return value as Record<string, unknown>;
}
