import { hash as digestOf, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'sk-gw-v1-';

/** `sk-gw-v1-` + 48 random hex characters (192 bits). */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('hex');
}

/** The key's public identifier and the only thing stored: hex SHA-256 of the secret. */
export function hashSecret(secret: string): string {
  return digestOf('sha256', secret);
}

/** Constant-time comparison of two hex hashes. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** `sk-gw-v1-ab1...f9`: enough to recognise a key, too little to use it. */
export function maskSecret(secret: string): string {
  const head = secret.startsWith(SECRET_PREFIX) ? SECRET_PREFIX.length + 3 : 3;
  return `${secret.slice(0, head)}...${secret.slice(-2)}`;
}

export function isKeyHash(value: string): boolean {
  return /^[0-9a-f]{64}$/.test(value);
}
