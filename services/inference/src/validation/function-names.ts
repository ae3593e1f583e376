/**
 * A function tool's name under OpenAI's rule, the contract of the chat and responses APIs: a name outside it is a
 * 400 here rather than a call the provider refuses.
 */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Null when `name` is a valid function name; otherwise what is wrong with it, for a message naming `param`. */
export function functionNameProblem(name: unknown, param: string): string | null {
  if (typeof name !== 'string' || name.length === 0) return `${param} is required`;
  return FUNCTION_NAME.test(name) ? null : `${param} must be 1 to 64 letters, digits, underscores or dashes`;
}
