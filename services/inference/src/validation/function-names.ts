import { InputError } from '@gw/platform';

/**
 * A function tool's name under OpenAI's rule, the contract of the chat and responses APIs: a name outside it is a
 * 400 here rather than a call the provider refuses.
 */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** `name` when it is a valid function name; otherwise a 400 naming `param`. */
export function checkFunctionName(name: unknown, param: string): string {
  if (typeof name !== 'string' || name.length === 0) throw new InputError(`${param} is required`, param);
  if (!FUNCTION_NAME.test(name)) throw new InputError(`${param} must be 1 to 64 letters, digits, underscores or dashes`, param);
  return name;
}
