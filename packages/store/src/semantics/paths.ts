import { isPlainObject, type PlainObject } from './values';

/** Dotted field paths (`a.b.0.c`) as queries and updates resolve them. */

const INDEX = /^(0|[1-9]\d*)$/;

export function isArrayIndex(segment: string): boolean {
  return INDEX.test(segment);
}

export function splitPath(path: string): string[] {
  const segments = path.split('.');
  // `__proto__` would walk into (and an update write to) Object.prototype rather than a field.
  if (segments.some((s) => s === '' || s === '__proto__')) throw new Error(`Invalid field path '${path}'`);
  return segments;
}

/** An array a path selects by position (`a.0` on `[[1, 2]]`): matched as a whole, never element by element. */
export class UntraversedArray {
  constructor(readonly array: unknown[]) {}
}

/**
 * Every value a query path reaches, with MongoDB's implicit array traversal. A missing field (including a
 * path that runs into a scalar) yields `undefined`. At an array with path left over, each sub-document
 * element is searched, an element at a numeric segment is taken as it is, and other elements yield nothing:
 * so `a.b` on `{ a: [] }` or `{ a: [1] }` reaches no value at all, which is neither null nor missing.
 */
export function valuesAtPath(doc: unknown, segments: string[]): unknown[] {
  const out: unknown[] = [];
  collect(doc, segments, 0, out);
  return out;
}

function collect(value: unknown, segments: string[], i: number, out: unknown[]): void {
  if (i === segments.length) out.push(value);
  else if (Array.isArray(value)) collectInArray(value, segments, i, out);
  else if (isPlainObject(value)) collect(value[segments[i]], segments, i + 1, out);
  else out.push(undefined);
}

function collectInArray(array: unknown[], segments: string[], i: number, out: unknown[]): void {
  const segment = segments[i];
  const offset = isArrayIndex(segment) ? Number(segment) : -1;
  for (let k = 0; k < array.length; k++) {
    const element = array[k];
    if (isPlainObject(element)) collect(element[segment], segments, i + 1, out);
    if (k !== offset) continue;
    if (i + 1 === segments.length) out.push(Array.isArray(element) ? new UntraversedArray(element) : element);
    else if (Array.isArray(element)) collectInArray(element, segments, i + 1, out);
    else if (isPlainObject(element)) collect(element, segments, i + 1, out);
  }
}

/** The value at an exact path (arrays only through numeric segments), as update operators read it. */
export function getExact(doc: PlainObject, segments: string[]): unknown {
  let current: unknown = doc;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!isArrayIndex(segment)) return undefined;
      current = current[Number(segment)];
    } else if (isPlainObject(current)) {
      current = current[segment];
    } else {
      return undefined;
    }
  }
  return current;
}

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** Sets a value, creating missing sub-documents; refuses to create a field inside a non-document. */
export function setExact(doc: PlainObject, segments: string[], value: unknown): void {
  let container: PlainObject | unknown[] = doc;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const last = i === segments.length - 1;
    if (Array.isArray(container)) {
      if (!isArrayIndex(segment)) {
        throw new Error(`Cannot create field '${segment}' in element ${describe(container)}`);
      }
      const index = Number(segment);
      while (container.length < index) container.push(null);
      if (last) {
        container[index] = value;
        return;
      }
      if (container[index] === undefined) container[index] = {};
      const next: unknown = container[index];
      if (!isPlainObject(next) && !Array.isArray(next)) {
        throw new Error(`Cannot create field '${segments[i + 1]}' in element {${segment}: ${describe(next)}}`);
      }
      container = next;
    } else {
      if (last) {
        container[segment] = value;
        return;
      }
      if (container[segment] === undefined) container[segment] = {};
      const next: unknown = container[segment];
      if (!isPlainObject(next) && !Array.isArray(next)) {
        throw new Error(`Cannot create field '${segments[i + 1]}' in element {${segment}: ${describe(next)}}`);
      }
      container = next;
    }
  }
}

/** Removes a field; an array element is set to null instead, as `$unset` does. Missing paths are a no-op. */
export function unsetExact(doc: PlainObject, segments: string[]): void {
  const parent = getExact(doc, segments.slice(0, -1));
  const leaf = segments[segments.length - 1];
  if (Array.isArray(parent)) {
    if (isArrayIndex(leaf) && Number(leaf) < parent.length) parent[Number(leaf)] = null;
  } else if (isPlainObject(parent)) {
    delete parent[leaf];
  }
}
