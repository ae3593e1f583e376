import { InputError, parseTimestamp, rejectUnknownFields, usdToMicros } from '@gw/platform';
import { LIMIT_RESETS, type KeyChanges, type LimitReset } from './key-store';
import type { CreateKeyInput } from './keys-service';

/**
 * Validation of key-management requests. Everything is checked before anything is written, and every
 * refusal names the offending parameter.
 */

const MAX_NAME_LENGTH = 128;
/** C0 and C1 control characters: a name is shown in lists, the console and terminals, where they would act. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
type Body = Record<string, unknown>;

function asObject(body: unknown): Body {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InputError('Request body must be a JSON object', 'body');
  return body as Body;
}

const CREATE_FIELDS: ReadonlySet<string> = new Set(['name', 'limit', 'limit_reset', 'expires_at', 'requests_per_minute', 'tokens_per_minute']);
const UPDATE_FIELDS: ReadonlySet<string> = new Set(['name', 'disabled', 'limit', 'limit_reset', 'requests_per_minute', 'tokens_per_minute']);

function parseName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new InputError('name must be a non-empty string', 'name');
  const name = value.trim();
  if (name.length > MAX_NAME_LENGTH) throw new InputError(`name must be at most ${MAX_NAME_LENGTH} characters`, 'name');
  if (CONTROL_CHARACTER.test(name)) throw new InputError('name must not contain control characters (line breaks, tabs, NUL, escapes)', 'name');
  return name;
}

/** USD number >= 0 with at most 6 decimals, or null (unlimited); returned in micros. */
function parseLimit(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new InputError('limit must be a number >= 0 or null', 'limit');
  try {
    return usdToMicros(value);
  } catch {
    throw new InputError('limit must have at most 6 decimals and stay within range', 'limit');
  }
}

function parseLimitReset(value: unknown): LimitReset | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !LIMIT_RESETS.includes(value as LimitReset)) {
    throw new InputError('limit_reset must be one of daily, weekly, monthly or null', 'limit_reset');
  }
  return value as LimitReset;
}

/** A per-minute rate limit: a positive integer, or null for the gateway's default. */
function parsePerMinute(value: unknown, param: 'requests_per_minute' | 'tokens_per_minute'): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new InputError(`${param} must be a positive integer or null`, param);
  return value;
}

// A time needs an explicit zone: a bare local time would mean different instants on different servers.
function parseExpiresAt(value: unknown, now: Date): string | null {
  if (value === null) return null;
  const ms = typeof value === 'string' ? parseTimestamp(value) : null;
  if (ms === null) throw new InputError('expires_at must be an ISO 8601 date-time with a time zone, or null', 'expires_at');
  if (ms <= now.getTime()) throw new InputError('expires_at must be in the future', 'expires_at');
  return new Date(ms).toISOString();
}

export function parseCreateKey(raw: unknown, now: Date): CreateKeyInput {
  const body = asObject(raw);
  rejectUnknownFields(body, CREATE_FIELDS);
  return {
    name: parseName(body.name),
    limit_micros: body.limit === undefined ? null : parseLimit(body.limit),
    limit_reset: body.limit_reset === undefined ? null : parseLimitReset(body.limit_reset),
    expires_at: body.expires_at === undefined ? null : parseExpiresAt(body.expires_at, now),
    requests_per_minute: body.requests_per_minute === undefined ? null : parsePerMinute(body.requests_per_minute, 'requests_per_minute'),
    tokens_per_minute: body.tokens_per_minute === undefined ? null : parsePerMinute(body.tokens_per_minute, 'tokens_per_minute'),
  };
}

export function parseUpdateKey(raw: unknown): KeyChanges {
  const body = asObject(raw);
  rejectUnknownFields(body, UPDATE_FIELDS);
  const changes: KeyChanges = {};
  if (body.name !== undefined) changes.name = parseName(body.name);
  if (body.disabled !== undefined) {
    if (typeof body.disabled !== 'boolean') throw new InputError('disabled must be a boolean', 'disabled');
    changes.disabled = body.disabled;
  }
  if (body.limit !== undefined) changes.limit_micros = parseLimit(body.limit);
  if (body.limit_reset !== undefined) changes.limit_reset = parseLimitReset(body.limit_reset);
  if (body.requests_per_minute !== undefined) changes.requests_per_minute = parsePerMinute(body.requests_per_minute, 'requests_per_minute');
  if (body.tokens_per_minute !== undefined) changes.tokens_per_minute = parsePerMinute(body.tokens_per_minute, 'tokens_per_minute');
  return changes;
}

type Query = Record<string, unknown>;

export function parseListQuery(query: Query): { offset: number; includeDisabled: boolean } {
  return { offset: parseOffset(query.offset), includeDisabled: parseBoolean(query.include_disabled, 'include_disabled') };
}

function parseOffset(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) throw new InputError('offset must be a non-negative integer', 'offset');
  return Number(value);
}

function parseBoolean(value: unknown, param: string): boolean {
  if (value === undefined) return false;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InputError(`${param} must be true or false`, param);
}
