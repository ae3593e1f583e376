import { microsToUsd } from '@gw/platform';
import type { KeyDoc, LimitReset } from './key-store';
import type { KeyUsageMicros } from './key-usage';

/** The public key object (OpenRouter key-management shape); amounts are USD numbers. */
export interface KeyObject {
  hash: string;
  name: string;
  label: string;
  disabled: boolean;
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: LimitReset | null;
  /** Rate limits per minute enforced at the edge; null: the gateway's default. */
  requests_per_minute: number | null;
  tokens_per_minute: number | null;
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
}

const usd = (micros: number) => Number(microsToUsd(micros));

/** Spend that counts against the limit: the current reset period's, or all of it for a limit that never resets. */
export function periodUsageMicros(usage: KeyUsageMicros, reset: LimitReset | null): number {
  switch (reset) {
    case 'daily': return usage.daily;
    case 'weekly': return usage.weekly;
    case 'monthly': return usage.monthly;
    default: return usage.total;
  }
}

/** Remaining limit in micros; null when unlimited, never below zero (in-flight calls may overshoot a little). */
export function limitRemainingMicros(doc: Pick<KeyDoc, 'limit_micros' | 'limit_reset'>, usage: KeyUsageMicros): number | null {
  if (doc.limit_micros === null) return null;
  return Math.max(0, doc.limit_micros - periodUsageMicros(usage, doc.limit_reset));
}

export function toKeyObject(doc: KeyDoc, usage: KeyUsageMicros): KeyObject {
  const remaining = limitRemainingMicros(doc, usage);
  return {
    hash: doc._id,
    name: doc.name,
    label: doc.label,
    disabled: doc.disabled,
    limit: doc.limit_micros === null ? null : usd(doc.limit_micros),
    limit_remaining: remaining === null ? null : usd(remaining),
    limit_reset: doc.limit_reset,
    requests_per_minute: doc.requests_per_minute ?? null,
    tokens_per_minute: doc.tokens_per_minute ?? null,
    usage: usd(usage.total),
    usage_daily: usd(usage.daily),
    usage_weekly: usd(usage.weekly),
    usage_monthly: usd(usage.monthly),
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    expires_at: doc.expires_at,
  };
}
