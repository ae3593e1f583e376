import type { ParameterSpec } from './schema';

/**
 * Why `value` falls outside a model's bounds for one parameter (`min`, `max`, `options`, `max_items`), or null.
 * A string's `min` and `max` bound its length in characters; an array's `options` are what each of its items
 * may be. The type is the caller's to check first.
 */
export function parameterBoundViolation(name: string, value: unknown, spec: ParameterSpec): string | null {
  if (typeof value === 'number') {
    if (spec.min !== null && value < spec.min) return `${name} must be at least ${spec.min}`;
    if (spec.max !== null && value > spec.max) return `${name} must be at most ${spec.max}`;
  }
  if (typeof value === 'string') {
    if (spec.min !== null && value.length < spec.min) return `${name} must have at least ${spec.min} characters`;
    if (spec.max !== null && value.length > spec.max) return `${name} may have at most ${spec.max} characters`;
  }
  const options = spec.options ?? [];
  if (options.length > 0 && !(Array.isArray(value) ? value : [value]).every((v) => options.includes(v as string | number | boolean))) {
    return `${Array.isArray(value) ? 'each item of ' : ''}${name} must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}`;
  }
  if (Array.isArray(value) && spec.max_items != null && value.length > spec.max_items) return `${name} takes at most ${spec.max_items} items`;
  return null;
}
