import type Datastore from '@seald-io/nedb';
import type { Filter } from '../port';
import { compileFilter, type Predicate } from '../semantics/filter';
import { isArrayIndex } from '../semantics/paths';
import { isOperatorObject, type PlainObject } from '../semantics/values';
import { Datafile } from './datafile';

/**
 * NeDB queries that evaluate our MongoDB-exact predicate (NeDB's own matching differs on null, missing
 * fields and `$ne`, and has no `$eq`). Equalities on single-field indexed paths are added in front as hints,
 * so NeDB can narrow its candidates with an index; for scalar values NeDB matches them exactly as MongoDB
 * does, so the hints never drop a document the predicate would keep.
 */

function isHintValue(v: unknown): boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

function indexHints(filter: Filter, indexed: ReadonlySet<string>): PlainObject {
  const hints: PlainObject = {};
  for (const [path, condition] of Object.entries(filter)) {
    // Compound indexes are left out: NeDB keys them by whole values, missing array fields MongoDB would match.
    if (!indexed.has(path) || path.split('.').some(isArrayIndex)) continue;
    if (isHintValue(condition)) hints[path] = condition;
    else if (isOperatorObject(condition)) {
      if ('$eq' in condition && isHintValue(condition.$eq)) hints[path] = condition.$eq;
      else if (Array.isArray(condition.$in) && condition.$in.length > 0 && condition.$in.every(isHintValue)) {
        hints[path] = { $in: condition.$in };
      }
    }
  }
  return hints;
}

/** A NeDB query matching exactly the documents `predicate` accepts. */
export function nedbQuery(ds: Datastore, filter: Filter, predicate: Predicate = compileFilter(filter)): PlainObject {
  return {
    ...indexHints(filter, Datafile.indexedFields(ds)),
    $where(this: unknown) {
      return predicate(this);
    },
  };
}

/**
 * The stored documents matching `filter`, uncopied and in natural order, at most `max` of them. The
 * `$where` visitor collects them and answers false, so NeDB copies nothing; callers copy what they return.
 * NeDB replaces a document object on update rather than changing it, so these stay consistent snapshots.
 */
export async function selectStored(ds: Datastore, filter: Filter, max = Infinity): Promise<PlainObject[]> {
  const predicate = compileFilter(filter);
  const selected: PlainObject[] = [];
  const query = nedbQuery(ds, filter, (doc) => {
    if (selected.length < max && predicate(doc)) selected.push(doc as PlainObject);
    return false;
  });
  await ds.findAsync(query);
  return selected;
}
