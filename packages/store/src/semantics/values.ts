/**
 * Values as MongoDB sees them: the BSON type order, comparison, equality, and the normalisation the Node
 * driver applies when it serialises a document. Engine-independent; the embedded engine builds on it.
 */

import { setOwnEntry } from '@gw/platform';

export type PlainObject = Record<string, unknown>;

export function isPlainObject(v: unknown): v is PlainObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && !(v instanceof RegExp);
}

/** An object whose keys are query or update operators (`{ $gt: 1 }`), as opposed to a literal sub-document. */
export function isOperatorObject(v: unknown): v is PlainObject {
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  return keys.length > 0 && keys[0].startsWith('$');
}

/**
 * Rank in the BSON comparison order (MinKey < null < numbers < strings < objects < arrays < ... < booleans <
 * dates < regexes). A missing value ranks as null, as it does in sorts and index keys.
 */
export function typeRank(v: unknown): number {
  if (v === undefined || v === null) return 1;
  switch (typeof v) {
    case 'number': return 2;
    case 'string': return 3;
    case 'boolean': return 8;
    default:
  }
  if (Array.isArray(v)) return 5;
  if (v instanceof Date) return 9;
  if (v instanceof RegExp) return 10;
  return 4;
}

/** UTF-16 code units compared so that the order equals code-point (and so UTF-8 byte) order, as in MongoDB. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (D800–DFFF) encode code points above FFFF, so they must rank above E000–FFFF.
    if (x >= 0xd800) x += x >= 0xe000 ? -0x800 : 0x2000;
    if (y >= 0xd800) y += y >= 0xe000 ? -0x800 : 0x2000;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function compareNumbers(a: number, b: number): number {
  // MongoDB orders NaN below every other number and equal to itself.
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Total order of BSON values (sort, `$min`/`$max`, range operators within one type). */
export function compareValues(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 1: return 0;
    case 2: return compareNumbers(a as number, b as number);
    case 3: return compareStrings(a as string, b as string);
    case 8: return a === b ? 0 : a ? 1 : -1;
    case 9: return compareNumbers((a as Date).getTime(), (b as Date).getTime());
    case 10: return compareStrings(String(a), String(b));
    case 5: return compareArrays(a as unknown[], b as unknown[]);
    default: return compareObjects(a as PlainObject, b as PlainObject);
  }
}

function compareArrays(a: unknown[], b: unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return compareNumbers(a.length, b.length);
}

/** Field by field in document order: first the value's type, then the field name, then the value. */
function compareObjects(a: PlainObject, b: PlainObject): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const ta = typeRank(a[ka[i]]);
    const tb = typeRank(b[kb[i]]);
    if (ta !== tb) return ta < tb ? -1 : 1;
    const names = compareStrings(ka[i], kb[i]);
    if (names !== 0) return names;
    const c = compareValues(a[ka[i]], b[kb[i]]);
    if (c !== 0) return c;
  }
  return compareNumbers(ka.length, kb.length);
}

/** BSON equality: same type and value; sub-documents must also have the same field order. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null) return b === undefined || b === null;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (typeof a !== 'object' || typeof b !== 'object' || b === null) return false;
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof RegExp) return b instanceof RegExp && String(a) === String(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (!isPlainObject(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i] || !valuesEqual((a as PlainObject)[ka[i]], b[kb[i]])) return false;
  }
  return true;
}

/**
 * A detached copy of a value as the Node driver would store it: `undefined` becomes null (the driver's
 * default, `ignoreUndefined: false`), functions are dropped, dates are copied. Types the embedded engine's JSON
 * cannot hold faithfully are refused rather than silently changed.
 */
export function toStoredValue(v: unknown, path = ''): unknown {
  if (typeof v !== 'object' || v === null) return storedScalar(v, path);
  if (v instanceof Date) return new Date(v.getTime());
  // A field's path is spelled out only for the nested values that need it, not for every scalar of a document.
  if (Array.isArray(v)) return v.map((el, i) => (typeof el === 'function' ? null : storedChild(el, path, i)));
  // Types with a BSON meaning of their own (binary, regex, ObjectId, ...) would not survive JSON;
  // any other object is stored as a sub-document of its own enumerable fields, as the driver does.
  if (v instanceof RegExp || v instanceof Map || v instanceof Set || v instanceof ArrayBuffer || ArrayBuffer.isView(v) || '_bsontype' in v) {
    throw new TypeError(`Cannot store a ${v.constructor?.name ?? 'special object'} at '${path}'`);
  }
  const out: PlainObject = {};
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const el = (v as PlainObject)[k];
    if (typeof el === 'function') continue;
    setOwnEntry(out, k, storedChild(el, path, k));
  }
  return out;
}

function storedChild(el: unknown, parent: string, key: string | number): unknown {
  const scalar = typeof el !== 'object' || el === null;
  return scalar ? storedScalar(el, parent, key) : toStoredValue(el, parent ? `${parent}.${key}` : String(key));
}

/** A scalar as stored; `key` (under `parent`) names it only in an error. */
function storedScalar(v: unknown, parent: string, key?: string | number): unknown {
  switch (typeof v) {
    case 'undefined':
      return null;
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      // The embedded engine stores JSON: NaN and ±Infinity would come back as null.
      if (!Number.isFinite(v)) throw new TypeError(`Cannot store non-finite number at '${childPath(parent, key)}'`);
      return v;
    case 'object':
      return null; // null itself
    default:
      throw new TypeError(`Cannot store a value of type ${typeof v} at '${childPath(parent, key)}'`);
  }
}

function childPath(parent: string, key: string | number | undefined): string {
  if (key === undefined) return parent;
  return parent ? `${parent}.${key}` : String(key);
}

/** A deep copy of a stored document or value (plain data and dates only). */
export function cloneValue<V>(v: V): V {
  if (typeof v !== 'object' || v === null) return v;
  if (v instanceof Date) return new Date(v.getTime()) as V;
  if (Array.isArray(v)) return v.map(cloneValue) as V;
  const out: PlainObject = {};
  for (const [k, el] of Object.entries(v)) setOwnEntry(out, k, cloneValue(el));
  return out as V;
}
