import { InputError } from './errors';

/** OpenAI's metadata rule (batches, responses): at most 16 pairs, keys of 1 to 64 characters, string values of at most 512. */
export const METADATA_MAX_PAIRS = 16;
export const METADATA_MAX_KEY_CHARS = 64;
export const METADATA_MAX_VALUE_CHARS = 512;

/**
 * A `metadata` field of string pairs, or null when absent; anything else is a 400. A key is named in the param only
 * once its length is known to be bounded.
 */
export function parseKeyValueMetadata(metadata: unknown): Record<string, string> | null {
  if (metadata === undefined || metadata === null) return null;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw new InputError('metadata must be an object of string values', 'metadata');
  const entries = Object.entries(metadata as Record<string, unknown>);
  if (entries.length > METADATA_MAX_PAIRS) throw new InputError(`metadata may have at most ${METADATA_MAX_PAIRS} key-value pairs`, 'metadata');
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > METADATA_MAX_KEY_CHARS) throw new InputError(`metadata keys must have 1 to ${METADATA_MAX_KEY_CHARS} characters`, 'metadata');
    if (typeof value !== 'string' || value.length > METADATA_MAX_VALUE_CHARS) {
      throw new InputError(`metadata values must be strings of at most ${METADATA_MAX_VALUE_CHARS} characters`, `metadata.${key}`);
    }
  }
  return metadata as Record<string, string>;
}
