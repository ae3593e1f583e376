import type { Filter, Update } from '../port';
import { getExact, setExact, splitPath, unsetExact } from './paths';
import { compareValues, isOperatorObject, isPlainObject, toStoredValue, valuesEqual, type PlainObject } from './values';

/**
 * MongoDB update semantics for the port's operators (`$set $inc $unset $setOnInsert $push $max $min`),
 * computed on a document copy so any engine can store the result as a replacement.
 */

const OPERATORS = new Set(['$set', '$inc', '$unset', '$setOnInsert', '$push', '$max', '$min']);

interface Change {
  operator: string;
  path: string;
  segments: string[];
  value: unknown;
}

/** Validates an update and flattens it into changes ordered by path, the order MongoDB applies them in. */
export function planUpdate(update: Update): Change[] {
  if (!isPlainObject(update)) throw new TypeError('An update must be an object');
  const operators = Object.keys(update);
  if (operators.length === 0) throw new Error('An update needs at least one update operator');
  const changes: Change[] = [];
  for (const operator of operators) {
    if (!OPERATORS.has(operator)) throw new Error(`Unsupported update operator ${operator}`);
    const fields = (update as Record<string, unknown>)[operator];
    if (!isPlainObject(fields)) throw new TypeError(`${operator} needs an object of fields`);
    for (const [path, value] of Object.entries(fields)) {
      changes.push({ operator, path, segments: splitPath(path), value: toStoredValue(value, path) });
    }
  }
  changes.sort((a, b) => comparePaths(a.segments, b.segments));
  for (let i = 1; i < changes.length; i++) {
    const [prev, next] = [changes[i - 1], changes[i]];
    if (isPrefix(prev.segments, next.segments)) {
      throw new Error(`Updating the path '${next.path}' would create a conflict at '${prev.path}'`);
    }
  }
  return changes;
}

/** Numeric segments in numeric order, others lexicographically, as MongoDB 5+ orders update fields. */
function comparePaths(a: string[], b: string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] === b[i]) continue;
    const na = /^\d+$/.test(a[i]);
    const nb = /^\d+$/.test(b[i]);
    if (na && nb) return Number(a[i]) - Number(b[i]) || (a[i] < b[i] ? -1 : 1);
    return a[i] < b[i] ? -1 : 1;
  }
  return a.length - b.length;
}

function isPrefix(short: string[], long: string[]): boolean {
  return short.length <= long.length && short.every((s, i) => s === long[i]);
}

/**
 * Applies an update to `doc` in place. `inserting` is true when the document is being created by an upsert
 * (only then does `$setOnInsert` apply). Throws when a change is impossible, as MongoDB would.
 */
export function applyUpdate(doc: PlainObject, changes: Change[], inserting: boolean): PlainObject {
  const id = doc._id;
  for (const change of changes) applyChange(doc, change, inserting);
  if (!inserting && !valuesEqual(doc._id, id)) {
    throw new Error("Performing an update on the path '_id' would modify the immutable field '_id'");
  }
  return doc;
}

function applyChange(doc: PlainObject, { operator, path, segments, value }: Change, inserting: boolean): void {
  switch (operator) {
    case '$setOnInsert':
      if (inserting) setExact(doc, segments, value);
      return;
    case '$set':
      setExact(doc, segments, value);
      return;
    case '$unset':
      unsetExact(doc, segments);
      return;
    case '$inc': {
      if (typeof value !== 'number') throw new TypeError(`Cannot increment '${path}' with a non-numeric argument`);
      const current = getExact(doc, segments);
      if (current === undefined) setExact(doc, segments, value);
      else if (typeof current === 'number') setExact(doc, segments, current + value);
      else throw new TypeError(`Cannot apply $inc to '${path}', a value of non-numeric type`);
      return;
    }
    case '$max':
    case '$min': {
      const current = getExact(doc, segments);
      const c = current === undefined ? 0 : compareValues(value, current);
      if (current === undefined || (operator === '$max' ? c > 0 : c < 0)) setExact(doc, segments, value);
      return;
    }
    case '$push':
      push(doc, path, segments, value);
      return;
    default:
      throw new Error(`Unsupported update operator ${operator}`);
  }
}

/** `$push` of one value, or the `{ $each, $position, $slice }` form. */
function push(doc: PlainObject, path: string, segments: string[], value: unknown): void {
  let items = [value];
  let position: number | undefined;
  let slice: number | undefined;
  if (isOperatorObject(value) && '$each' in value) {
    for (const key of Object.keys(value)) {
      if (key !== '$each' && key !== '$position' && key !== '$slice') throw new Error(`Unsupported $push modifier ${key}`);
    }
    if (!Array.isArray(value.$each)) throw new TypeError(`$each for '${path}' must be an array`);
    items = value.$each;
    position = integerModifier(value.$position, '$position');
    slice = integerModifier(value.$slice, '$slice');
  }
  const current = getExact(doc, segments);
  if (current !== undefined && !Array.isArray(current)) {
    throw new TypeError(`The field '${path}' must be an array to $push to it`);
  }
  let array = current === undefined ? [] : [...current];
  const at = position === undefined ? array.length : position < 0 ? Math.max(0, array.length + position) : Math.min(position, array.length);
  array.splice(at, 0, ...items);
  if (slice !== undefined) array = slice >= 0 ? array.slice(0, slice) : array.slice(Math.max(0, array.length + slice));
  setExact(doc, segments, array);
}

function integerModifier(v: unknown, name: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Number.isInteger(v)) throw new TypeError(`${name} must be an integer`);
  return v as number;
}

/**
 * The document an upsert starts from: the filter's equality conditions (`field: value`, `{ $eq }`, inside
 * `$and`, or a one-clause `$or`), before the update is applied.
 */
export function upsertBase(filter: Filter): PlainObject {
  const base: PlainObject = {};
  addEqualities(base, filter);
  return base;
}

function addEqualities(base: PlainObject, filter: Filter): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) condition.forEach((c) => addEqualities(base, c as Filter));
    else if (key === '$or' && Array.isArray(condition) && condition.length === 1) addEqualities(base, condition[0] as Filter);
    else if (key.startsWith('$')) continue;
    else if (!isOperatorObject(condition)) setExact(base, splitPath(key), toStoredValue(condition, key));
    else if ('$eq' in condition) setExact(base, splitPath(key), toStoredValue(condition.$eq, key));
  }
}

/** True when an upsert with this filter and update creates its document with a known `_id`. */
export function upsertFixesId(filter: Filter, update: Update): boolean {
  return update.$set?._id !== undefined || update.$setOnInsert?._id !== undefined || filterFixesId(filter);
}

function filterFixesId(filter: Filter): boolean {
  return Object.entries(filter).some(([key, condition]) => {
    if (key === '_id') return !isOperatorObject(condition) || '$eq' in condition;
    if (key === '$and' && Array.isArray(condition)) return condition.some((c) => filterFixesId(c as Filter));
    if (key === '$or' && Array.isArray(condition) && condition.length === 1) return filterFixesId(condition[0] as Filter);
    return false;
  });
}

/** Puts `_id` first, where MongoDB keeps it. */
export function idFirst(doc: PlainObject): PlainObject {
  if (Object.keys(doc)[0] === '_id') return doc;
  const { _id, ...rest } = doc;
  return { _id, ...rest };
}
