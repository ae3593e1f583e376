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

/** A platform billing id as `newRequestId` makes it (UUID version 4, RFC 4122 variant). */
export function isRequestId(value: string): boolean {
  return /^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(value);
}
