/**
 * Trusted identity headers: set only by the edge after authentication, stripped from every client request
 * (the edge removes anything starting with the prefix), read by the services behind it.
 */
export const INTERNAL_HEADER_PREFIX = 'x-gw-';
export const H_TRACE_ID = 'x-gw-trace-id';
export const H_ACCOUNT_ID = 'x-gw-account-id';
export const H_KEY_HASH = 'x-gw-key-hash';
export const H_KEY_MANAGEMENT = 'x-gw-key-management';
export const H_KEY_LIMIT_MICROS = 'x-gw-key-limit-micros';
export const H_KEY_LIMIT_RESET = 'x-gw-key-limit-reset';

export interface Identity {
  accountId: string;
  keyHash: string;
  isManagement: boolean;
  /** Key spending limit in micros, or null when unlimited. */
  keyLimitMicros: number | null;
  keyLimitReset: 'daily' | 'weekly' | 'monthly' | null;
}

type Headers = Record<string, string | string[] | undefined>;
const one = (h: Headers, k: string) => {
  const v = h[k];
  return Array.isArray(v) ? v[0] : v;
};

/** Reads the identity the edge attached; null when the request did not come through authentication. */
export function readIdentity(headers: Headers): Identity | null {
  const accountId = one(headers, H_ACCOUNT_ID);
  const keyHash = one(headers, H_KEY_HASH);
  if (!accountId || !keyHash) return null;
  const limit = one(headers, H_KEY_LIMIT_MICROS);
  // Only the edge writes this header; a malformed limit must not silently disable the limit.
  if (limit !== undefined && !/^\d+$/.test(limit)) return null;
  const reset = one(headers, H_KEY_LIMIT_RESET);
  return {
    accountId,
    keyHash,
    isManagement: one(headers, H_KEY_MANAGEMENT) === 'true',
    keyLimitMicros: limit ? Number(limit) : null,
    keyLimitReset: reset === 'daily' || reset === 'weekly' || reset === 'monthly' ? reset : null,
  };
}

export function identityHeaders(id: Identity): Record<string, string> {
  const h: Record<string, string> = {
    [H_ACCOUNT_ID]: id.accountId,
    [H_KEY_HASH]: id.keyHash,
    [H_KEY_MANAGEMENT]: String(id.isManagement),
  };
  if (id.keyLimitMicros !== null) h[H_KEY_LIMIT_MICROS] = String(id.keyLimitMicros);
  if (id.keyLimitReset) h[H_KEY_LIMIT_RESET] = id.keyLimitReset;
  return h;
}
