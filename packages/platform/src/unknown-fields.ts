import { InputError } from './errors';

/**
 * A 400 `unknown_parameter` naming a body field the endpoint does not have, with what to send instead when the
 * caller most likely meant another field (`hint`). Refused rather than ignored: a misspelt or unsupported field
 * would otherwise change nothing without a word.
 */
export function unknownParameterError(name: string, hint?: string): InputError {
  return new InputError(`Unknown parameter: ${name}${hint ? ` (${hint})` : ''}`, name, 'unknown_parameter');
}

/** The first field of `body` that `known` does not hold, refused (see unknownParameterError). */
export function rejectUnknownFields(body: Record<string, unknown>, known: ReadonlySet<string>, hints: Readonly<Record<string, string>> = {}): void {
  for (const name of Object.keys(body)) {
    if (!known.has(name)) throw unknownParameterError(name, Object.hasOwn(hints, name) ? hints[name] : undefined);
  }
}
