import { InputError } from '@gw/platform';

/**
 * The longest caller identifiers the gateway passes upstream, in characters, so one past them is a 400 here
 * rather than a call the provider refuses (or a key of any length sent on): OpenAI's `prompt_cache_key` and
 * `safety_identifier` take 64, Anthropic's `metadata.user_id` 256; the deprecated `user` has no stated bound
 * and gets the same 256.
 */
export const CALLER_IDENTIFIER_MAX_CHARS = {
  prompt_cache_key: 64,
  safety_identifier: 64,
  user: 256,
  'metadata.user_id': 256,
} as const;

export type CallerIdentifier = keyof typeof CALLER_IDENTIFIER_MAX_CHARS;

/** A 400 naming `param` when `value` is a string longer than its bound; type checks are the caller's. */
export function checkCallerIdentifier(value: unknown, param: CallerIdentifier): void {
  const max = CALLER_IDENTIFIER_MAX_CHARS[param];
  if (typeof value === 'string' && value.length > max) throw new InputError(`${param} may have at most ${max} characters`, param);
}
