import type { Filter } from '../port';
import { isOperatorObject } from '../semantics/values';

/**
 * The part of a filter SQLite can evaluate on its own, so an index narrows the rows and the in-process matcher
 * (semantics/filter) sees only candidates. A path is translated only when every stored document reaches it
 * without an array (MongoDB would then match element by element) — the collection tracks that for its
 * indexed paths. Each translated condition carries a type guard (`json_type`), so it selects exactly what
 * MongoDB's type bracketing selects; `exact` says whether the whole filter was translated, so the matcher
 * can be skipped.
 */

export type SqlParam = string | number;

export interface SqlFilter {
  where: string;
  params: SqlParam[];
  exact: boolean;
  /** Paths the translated conditions restrict to numbers or strings, on which SQL's order is MongoDB's order. */
  typed: Set<string>;
  /** A range was translated: see sqlSortPlan, which then keeps SQLite from scanning the table for insertion order. */
  ranged: boolean;
}

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** True when `path` can be written as a JSON path SQLite and MongoDB read the same way (no array indexes). */
export function isPlainPath(path: string): boolean {
  return path.split('.').every((s) => SEGMENT.test(s));
}

export function jsonPath(path: string): string {
  return `'$.${path.split('.').map((s) => `"${s}"`).join('.')}'`;
}

/** The SQL expression of a document field: the one every expression index and query uses, character for character. */
export function fieldExpr(path: string): string {
  return path === '_id' ? 'id' : `json_extract(doc, ${jsonPath(path)})`;
}

const TYPE_GUARD = { number: "IN ('integer', 'real')", string: "= 'text'" } as const;
const RANGE = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

type Scalar = string | number | boolean | null;

function isScalar(v: unknown): v is Scalar {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

class Translation {
  readonly parts: string[] = [];
  readonly params: SqlParam[] = [];
  readonly typed = new Set<string>();
  exact = true;
  ranged = false;

  constructor(readonly translatable: (path: string) => boolean) {}

  field(path: string, condition: unknown): void {
    if (!this.translatable(path)) return void (this.exact = false);
    if (!isOperatorObject(condition)) return this.equality(path, [condition]);
    for (const [operator, operand] of Object.entries(condition)) {
      if (operator === '$eq') this.equality(path, [operand]);
      else if (operator === '$in' && Array.isArray(operand)) this.equality(path, operand);
      else if (operator in RANGE) this.range(path, RANGE[operator as keyof typeof RANGE], operand);
      else if (operator === '$exists') this.exists(path, Boolean(operand));
      else this.exact = false;
    }
  }

  /** `path` equal to one of `values` (a plain equality, `$eq`, or `$in`). */
  private equality(path: string, values: unknown[]): void {
    if (!values.every(isScalar)) return void (this.exact = false);
    const expr = fieldExpr(path);
    const alternatives: string[] = [];
    // `_id` is always a string: no other value can match it (and the column's text affinity would turn 5 into '5').
    if (path === '_id') values = values.filter((v) => typeof v === 'string');
    for (const type of ['string', 'number'] as const) {
      const same = values.filter((v) => typeof v === type) as SqlParam[];
      if (same.length === 0) continue;
      const test = same.length === 1 ? `${expr} = ?` : `${expr} IN (${same.map(() => '?').join(', ')})`;
      alternatives.push(path === '_id' ? test : `(${test} AND ${typeOf(path)} ${TYPE_GUARD[type]})`);
      this.params.push(...same);
      if (same.length === values.length) this.typed.add(path);
    }
    // json_extract reads true and false as 1 and 0, so the test on it lets an index of the field serve the equality;
    // the type guard keeps the numbers 1 and 0 out.
    for (const flag of [true, false]) if (values.includes(flag)) alternatives.push(`(${expr} = ${flag ? 1 : 0} AND ${typeOf(path)} = '${flag}')`);
    if (values.includes(null)) alternatives.push(`${expr} IS NULL`);
    this.parts.push(alternatives.length === 0 ? '0' : alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`);
  }

  private range(path: string, op: string, bound: unknown): void {
    const type = typeof bound === 'string' ? 'string' : typeof bound === 'number' && Number.isFinite(bound) ? 'number' : null;
    if (!type || (path === '_id' && type !== 'string')) return void (this.exact = false);
    const test = `${fieldExpr(path)} ${op} ?`;
    this.parts.push(path === '_id' ? test : `(${test} AND ${typeOf(path)} ${TYPE_GUARD[type]})`);
    this.params.push(bound as SqlParam);
    this.typed.add(path);
    this.ranged = true;
  }

  private exists(path: string, wanted: boolean): void {
    if (path === '_id') this.parts.push(wanted ? '1' : '0');
    else this.parts.push(`${typeOf(path)} IS ${wanted ? 'NOT ' : ''}NULL`);
  }
}

function typeOf(path: string): string {
  return `json_type(doc, ${jsonPath(path)})`;
}

export function translateFilter(filter: Filter, translatable: (path: string) => boolean): SqlFilter {
  const t = new Translation(translatable);
  addFilter(t, filter);
  return { where: t.parts.length > 0 ? t.parts.join(' AND ') : '1', params: t.params, exact: t.exact, typed: t.typed, ranged: t.ranged };
}

const isClauseList = (v: unknown): v is Filter[] =>
  Array.isArray(v) && v.length > 0 && v.every((c) => typeof c === 'object' && c !== null && !Array.isArray(c));

function addFilter(t: Translation, filter: Filter): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && isClauseList(condition)) for (const clause of condition) addFilter(t, clause);
    else if (key === '$or' && isClauseList(condition)) addAlternatives(t, condition);
    else if (key.startsWith('$')) t.exact = false;
    else t.field(key, condition);
  }
}

/**
 * `$or`: each branch's SQL selects a superset of what the branch matches, so their disjunction narrows
 * correctly even where a branch was only partly translated; it is exact when every branch is. A path is typed
 * when every branch restricts it (to number or string: SQL orders those two as MongoDB does).
 */
function addAlternatives(t: Translation, branches: Filter[]): void {
  const translated = branches.map((b) => translateFilter(b, t.translatable));
  t.parts.push(`(${translated.map((b) => `(${b.where})`).join(' OR ')})`);
  for (const b of translated) t.params.push(...b.params);
  if (!translated.every((b) => b.exact)) t.exact = false;
  if (translated.some((b) => b.ranged)) t.ranged = true;
  for (const path of translated[0].typed) if (translated.every((b) => b.typed.has(path))) t.typed.add(path);
}
