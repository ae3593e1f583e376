/**
 * Internal headers: the edge removes every client header starting with the prefix, then sets its own. Identity
 * itself travels only as a signed token (`identity-token.ts`); the trace id header is informational.
 */
export const INTERNAL_HEADER_PREFIX = 'x-gw-';
export const H_TRACE_ID = 'x-gw-trace-id';

export interface Identity {
  accountId: string;
  keyHash: string;
  isManagement: boolean;
  /** Key spending limit in micros, or null when unlimited. */
  keyLimitMicros: number | null;
  keyLimitReset: 'daily' | 'weekly' | 'monthly' | null;
}
