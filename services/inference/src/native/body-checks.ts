import { InputError } from '@gw/platform';

/** Small shape checks shared by the native APIs' rules: each failure is a 400 naming the offending param. */

export type Body = Record<string, unknown>;

export const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Absent or null: OpenAI-style APIs treat an explicit null like an omitted field. */
export const isAbsent = (v: unknown): v is undefined | null => v === undefined || v === null;

export function check(ok: boolean, param: string, message: string): void {
  if (!ok) throw new InputError(message, param);
}

export function checkRequestBody(body: unknown): Body {
  check(isObject(body), 'body', 'Request body must be a JSON object');
  return body as Body;
}

export function checkModel(body: Body): string {
  check(typeof body.model === 'string' && body.model.length > 0, 'model', 'model is required and must be a non-empty string');
  return body.model as string;
}

export function checkEnum(value: unknown, param: string, options: readonly string[]): void {
  if (isAbsent(value)) return;
  check(typeof value === 'string' && options.includes(value), param, `${param} must be one of ${options.join(', ')}`);
}

export function checkNumber(value: unknown, param: string, range: { min?: number; max?: number; integer?: boolean } = {}): void {
  if (isAbsent(value)) return;
  const { min, max, integer } = range;
  const kind = integer ? 'an integer' : 'a number';
  const ok = typeof value === 'number' && Number.isFinite(value) && (!integer || Number.isSafeInteger(value));
  check(ok, param, `${param} must be ${kind}`);
  const n = value as number;
  if (min !== undefined && max !== undefined) check(n >= min && n <= max, param, `${param} must be between ${min} and ${max}`);
  else if (min !== undefined) check(n >= min, param, `${param} must be at least ${min}`);
  else if (max !== undefined) check(n <= max, param, `${param} must be at most ${max}`);
}

export function checkType(value: unknown, param: string, type: 'string' | 'boolean' | 'object'): void {
  if (isAbsent(value)) return;
  const ok = type === 'object' ? isObject(value) : typeof value === type;
  check(ok, param, `${param} must be ${type === 'object' ? 'an object' : `a ${type}`}`);
}

/** Content parts (blocks) are objects with a type; a part of one of `textTypes` carries its text. */
export function checkTypedParts(parts: unknown[], param: string, textTypes: readonly string[]): void {
  parts.forEach((part, j) => {
    const p = `${param}[${j}]`;
    check(isObject(part) && typeof part.type === 'string', `${p}.type`, `${p} must be an object with a type`);
    const { type, text } = part as Body;
    if (textTypes.includes(type as string)) check(typeof text === 'string', `${p}.text`, `${p}.text must be a string`);
  });
}
