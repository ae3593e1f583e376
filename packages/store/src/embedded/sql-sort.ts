import { fieldExpr, jsonPath } from './sql-filter';

/** Rows of one BSON type bracket of the sort field, read in SQL's order or (`inMemory`) sorted after reading. */
export interface SortPartition {
  where: string;
  order: string;
  inMemory: boolean;
}

/**
 * How SQLite can return documents in MongoDB's sort order, so a sorted read with a limit stops after the rows
 * it returns instead of reading (and decoding) every match to sort them. Null when it cannot: the caller then
 * sorts every match in memory.
 *
 * SQL orders NULL < numbers < text, as MongoDB orders null (and missing) < numbers < strings, but
 * `json_extract` turns booleans into 0/1 and objects (dates included, stored as `{"$date": ms}`) into text,
 * which would interleave. So a field the filter does not restrict to numbers or strings is read one type
 * bracket at a time: null or missing, numbers, strings, then the rest (objects, booleans: rare), which is
 * sorted in memory; each bracket is a search of the field's index. That needs the path indexed with no array
 * seen on it (an array sorts by its smallest or largest element, MongoDB's rule, which no bracket query can
 * express). A second key is supported only when it is `_id` (the usual stable tie-break); ties left over keep
 * insertion order (rowid), as the in-memory sort does.
 */
export function sqlSortPlan(
  keys: ReadonlyArray<[string, 1 | -1]>, typed: ReadonlySet<string>, translatable: (path: string) => boolean, ranged = false,
): SortPartition[] | null {
  // Unsorted reads come in insertion order. Asked for rowid order with a range in the filter, SQLite scans the whole
  // table in that order rather than search the range's index and sort what it found (it has no statistics to know
  // the range is narrow); `+rowid` is an expression, so no scan can give that order and the index wins.
  if (keys.length === 0) return [{ where: '1', order: ranged ? '+rowid' : 'rowid', inMemory: false }];
  const [[path, direction], ...rest] = keys;
  if (rest.length > 1 || (rest.length === 1 && (rest[0][0] !== '_id' || path === '_id'))) return null;
  const tieBreak = rest.length === 1 ? `id ${sqlDirection(rest[0][1])}, rowid` : 'rowid';
  const order = `${fieldExpr(path)} ${sqlDirection(direction)}, ${tieBreak}`;
  if (path === '_id' || typed.has(path)) return [{ where: '1', order, inMemory: false }];
  if (!translatable(path)) return null;
  const type = `json_type(doc, ${jsonPath(path)})`;
  const brackets: SortPartition[] = [
    { where: `${fieldExpr(path)} IS NULL`, order: tieBreak, inMemory: false },
    { where: `${type} IN ('integer', 'real')`, order, inMemory: false },
    { where: `${type} = 'text'`, order, inMemory: false },
    { where: `${restOfTypes(fieldExpr(path))} AND ${type} NOT IN ('null', 'integer', 'real', 'text')`, order: 'rowid', inMemory: true },
  ];
  return direction === 1 ? brackets : brackets.reverse();
}

/**
 * A condition the field's index can serve that every value of the last bracket meets: `json_extract` makes a
 * boolean 0 or 1 and an object or array its JSON text. Without it the bracket, which a descending sort reads
 * first, is found by scanning the whole table; with it SQLite searches three short stretches of the index.
 */
function restOfTypes(expr: string): string {
  return `(${expr} IN (0, 1) OR (${expr} >= '{' AND ${expr} < '|') OR (${expr} >= '[' AND ${expr} < '\\'))`;
}

function sqlDirection(direction: 1 | -1): string {
  return direction === 1 ? 'ASC' : 'DESC';
}
