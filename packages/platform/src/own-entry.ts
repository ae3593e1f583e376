/**
 * Sets `key` on `target` as its own enumerable field, also when the key is `__proto__`: a plain assignment of
 * that key sets the object's prototype instead (dropping the field, or polluting what the copy inherits), and
 * callers' free-form objects (metadata, archived bodies) may hold any key.
 */
export function setOwnEntry(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
