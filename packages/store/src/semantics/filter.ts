import type { Filter } from '../port';
import { splitPath, UntraversedArray, valuesAtPath } from './paths';
import { compareValues, isOperatorObject, isPlainObject, toStoredValue, typeRank, valuesEqual } from './values';

/**
 * MongoDB filter semantics compiled to a predicate: the port's operators (`$eq $ne $gt $gte $lt $lte $in
 * $nin $exists`, `$or`) plus `$and`/`$nor`. Anything else is refused, so no filter silently means something
 * different on the embedded engine than on MongoDB.
 */
export type Predicate = (doc: unknown) => boolean;

/** Tests one value; `undefined` stands for a missing field. */
type ValueTest = (value: unknown) => boolean;

/** The values a path reaches in a document. */
type Reach = (doc: unknown) => unknown[];

/** MongoDB's leaf traversal: a reached array is tested element by element, then as a whole. */
function anyReached(values: unknown[], test: ValueTest): boolean {
  for (const v of values) {
    if (v instanceof UntraversedArray) {
      if (test(v.array)) return true;
      continue;
    }
    if (Array.isArray(v) && v.some(test)) return true;
    if (test(v)) return true;
  }
  return false;
}

export function compileFilter(filter: Filter): Predicate {
  if (!isPlainObject(filter)) throw new TypeError('A filter must be an object');
  const parts: Predicate[] = [];
  for (const [key, condition] of Object.entries(filter)) {
    if (key.startsWith('$')) parts.push(compileLogical(key, condition));
    else parts.push(compileField(key, condition));
  }
  if (parts.length === 1) return parts[0];
  return (doc) => parts.every((p) => p(doc));
}

function compileLogical(operator: string, clauses: unknown): Predicate {
  if (operator !== '$or' && operator !== '$and' && operator !== '$nor') {
    throw new Error(`Unsupported query operator ${operator}`);
  }
  if (!Array.isArray(clauses) || clauses.length === 0) throw new Error(`${operator} needs a non-empty array`);
  const compiled = clauses.map((c) => compileFilter(c as Filter));
  if (operator === '$or') return (doc) => compiled.some((p) => p(doc));
  if (operator === '$and') return (doc) => compiled.every((p) => p(doc));
  return (doc) => !compiled.some((p) => p(doc));
}

function compileField(path: string, condition: unknown): Predicate {
  const segments = splitPath(path);
  const reach: Reach = (doc) => valuesAtPath(doc, segments);
  if (!isOperatorObject(condition)) {
    const equals = equalityTest(condition);
    return (doc) => anyReached(reach(doc), equals);
  }
  const tests: Predicate[] = [];
  for (const [operator, operand] of Object.entries(condition)) {
    tests.push(compileOperator(operator, operand, reach));
  }
  return (doc) => tests.every((t) => t(doc));
}

function compileOperator(operator: string, operand: unknown, reach: Reach): Predicate {
  switch (operator) {
    case '$eq': {
      const equals = equalityTest(operand);
      return (doc) => anyReached(reach(doc), equals);
    }
    case '$ne': {
      const equals = equalityTest(operand);
      return (doc) => !anyReached(reach(doc), equals);
    }
    case '$in': {
      const test = inTest(operand, operator);
      return (doc) => anyReached(reach(doc), test);
    }
    case '$nin': {
      const test = inTest(operand, operator);
      return (doc) => !anyReached(reach(doc), test);
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const test = rangeTest(operator, operand);
      return (doc) => anyReached(reach(doc), test);
    }
    case '$exists': {
      const wanted = Boolean(operand);
      return (doc) => anyReached(reach(doc), (v) => v !== undefined) === wanted;
    }
    default:
      throw new Error(`Unsupported query operator ${operator}`);
  }
}

/** The operand as the driver would send it (`undefined` → null), refusing what we cannot compare. */
function operandValue(operand: unknown): unknown {
  if (operand instanceof RegExp) throw new Error('Regular expressions are not supported in filters');
  if (typeof operand === 'number') return operand; // ±Infinity is a fine bound though it cannot be stored
  return toStoredValue(operand);
}

/** BSON equality, where a null operand also matches a missing field. */
function equalityTest(operand: unknown): ValueTest {
  const expected = operandValue(operand);
  if (expected === null) return (v) => v === null || v === undefined;
  return (v) => valuesEqual(v, expected);
}

function inTest(operand: unknown, operator: string): ValueTest {
  if (!Array.isArray(operand)) throw new Error(`${operator} needs an array`);
  const tests = operand.map(equalityTest);
  return (v) => tests.some((t) => t(v));
}

/** Range operators compare only within one BSON type ("type bracketing"); null also matches missing. */
function rangeTest(operator: string, operand: unknown): ValueTest {
  const bound = operandValue(operand);
  // Stored numbers are never NaN, and MongoDB's range operators match NaN only against NaN.
  if (Number.isNaN(bound)) return () => false;
  const rank = typeRank(bound);
  const accept = (c: number) =>
    operator === '$gt' ? c > 0 : operator === '$gte' ? c >= 0 : operator === '$lt' ? c < 0 : c <= 0;
  return (v) => typeRank(v) === rank && accept(compareValues(v, bound));
}
