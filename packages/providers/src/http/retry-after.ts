import type { IncomingHttpHeaders } from 'node:http';

/**
 * Seconds to wait, from `retry-after-ms` (sent by some OpenAI-style APIs) or `retry-after` (delta seconds or
 * an HTTP date), rounded up; undefined when absent or unreadable.
 */
export function retryAfterSeconds(headers: IncomingHttpHeaders, now = Date.now()): number | undefined {
  const ms = Number(first(headers['retry-after-ms']));
  if (first(headers['retry-after-ms']) !== undefined && Number.isFinite(ms) && ms >= 0) return Math.ceil(ms / 1000);

  const value = first(headers['retry-after'])?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
