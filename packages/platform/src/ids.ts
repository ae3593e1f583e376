import { randomFillSync, randomUUID } from 'node:crypto';

/**
 * Random bytes for ids, trace ids and nonces on the hot path, cut from a pool the CSPRNG refills 4 KiB at a
 * time: one system call per ~250 ids instead of one each. (Not for secrets: those are made where they are kept.)
 */
const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;

export function randomText(bytes: number, encoding: 'hex' | 'base64url'): string {
  if (bytes > pool.length) throw new RangeError(`at most ${pool.length} pooled random bytes at a time`);
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const text = pool.toString(encoding, poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return text;
}

/** The platform billing id: `br-<UUIDv4>`, always made here, never taken from a caller header. */
export function newRequestId(): string {
  return `br-${randomUUID()}`;
}

export function newTraceId(): string {
  return randomText(16, 'hex');
}

/** Prefixed opaque id, e.g. `chatjob_...`, `chatcmpl-...`. */
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}${randomText(bytes, 'hex')}`;
}

/** A platform billing id as `newRequestId` makes it (UUID version 4, RFC 4122 variant). */
export function isRequestId(value: string): boolean {
  return /^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(value);
}
