/**
 * What the archive must never keep: credentials a caller put in a body. Fields named like a credential are
 * replaced whole, and strings shaped like a bearer token or an API key are masked wherever they appear.
 * Headers are never archived at all, so `authorization` and `x-api-key` never reach here as headers.
 */
export const REDACTED = '[redacted]';

const CREDENTIAL_FIELD = /^(x[-_])?(api[-_]?key|apikey|authorization|password|passwd|secret|client[-_]secret|access[-_]token|refresh[-_]token|id[-_]token|private[-_]key|credentials?)$/i;
const CREDENTIAL_TEXT = [
  /\bBearer\s+[A-Za-z0-9._~+/-]{8,}=*/gi,
  // The gateway's own keys, and the common `sk-`/`rk-` shape of provider keys.
  /\b(sk|rk)-[A-Za-z0-9_-]{16,}/g,
];

export function redactText(text: string): string {
  return CREDENTIAL_TEXT.reduce((t, pattern) => t.replace(pattern, REDACTED), text);
}

/** A field whose value is replaced whole, whatever it holds. */
export function isCredentialField(name: string): boolean {
  return CREDENTIAL_FIELD.test(name);
}
