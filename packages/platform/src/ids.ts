import { randomBytes, randomUUID } from 'node:crypto';

/** The platform billing id: `br-<UUIDv4>`, always made here, never taken from a caller header. */
export function newRequestId(): string {
  return `br-${randomUUID()}`;
}

export function newTraceId(): string {
  return randomBytes(16).toString('hex');
}

/** Prefixed opaque id, e.g. `chatjob_...`, `chatcmpl-...`. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}${randomBytes(bytes).toString('hex')}`;
}
