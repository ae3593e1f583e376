import { splitPath, UntraversedArray, valuesAtPath } from './paths';
import { compareValues } from './values';

/**
 * MongoDB sort order: BSON type order, missing sorts as null, and an array field sorts by its smallest
 * element ascending / largest descending (an empty array sorts below null).
 */

const EMPTY_ARRAY = Symbol('empty array');

function compareKeys(a: unknown, b: unknown): number {
  if (a === EMPTY_ARRAY || b === EMPTY_ARRAY) return a === b ? 0 : a === EMPTY_ARRAY ? -1 : 1;
  return compareValues(a, b);
}

function sortKey(doc: unknown, segments: string[], direction: 1 | -1): unknown {
  let best: unknown;
  let found = false;
  const consider = (v: unknown) => {
    if (!found || compareKeys(v, best) * direction < 0) best = v;
    found = true;
  };
  for (const reached of valuesAtPath(doc, segments)) {
    const v = reached instanceof UntraversedArray ? reached.array : reached;
    if (Array.isArray(v)) {
      if (v.length === 0) consider(EMPTY_ARRAY);
      else v.forEach(consider);
    } else {
      consider(v === undefined ? null : v);
    }
  }
  return best;
}

/** Sorts in place; the sort is stable, so ties keep their natural (insertion) order. */
export function sortDocuments<D>(docs: D[], spec: Record<string, 1 | -1>): D[] {
  const fields = Object.entries(spec).map(([path, direction]) => {
    if (direction !== 1 && direction !== -1) throw new Error(`Sort direction for '${path}' must be 1 or -1`);
    return { segments: splitPath(path), direction };
  });
  if (fields.length === 0) return docs;
  const keyed = docs.map((doc) => ({ doc, keys: fields.map((f) => sortKey(doc, f.segments, f.direction)) }));
  keyed.sort((x, y) => {
    for (let i = 0; i < fields.length; i++) {
      const c = compareKeys(x.keys[i], y.keys[i]);
      if (c !== 0) return c * fields[i].direction;
    }
    return 0;
  });
  for (let i = 0; i < keyed.length; i++) docs[i] = keyed[i].doc;
  return docs;
}
