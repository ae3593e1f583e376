import { setOwnEntry } from '@gw/platform';
import { describeBinary, describeString } from './inline-media';
import { isCredentialField, REDACTED, redactText } from './redact';

/** Deeper parts of a body are replaced whole: the walk is bounded, and nothing unredacted slips through below. */
const MAX_DEPTH = 64;

/**
 * What the archive keeps of a body, as a copy made in one walk: inline media described, never kept
 * (inline-media.ts), and credentials redacted (redact.ts).
 */
export function archivableCopy(value: unknown, depth = 0, key = ''): unknown {
  if (typeof value === 'string') {
    const described = describeString(value, key);
    return typeof described === 'string' ? redactText(described) : described;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return REDACTED;
  if (value instanceof Uint8Array) return describeBinary(value);
  if (Array.isArray(value)) return value.map((v) => archivableCopy(v, depth + 1, key));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) setOwnEntry(out, k, isCredentialField(k) ? REDACTED : archivableCopy(v, depth + 1, k));
  return out;
}
