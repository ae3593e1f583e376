import { appendFileSync } from 'node:fs';
import type { Logger } from '@gw/platform';

/** One read through a filter (or one sorted page) that SQLite answers by visiting every row of the collection's table. */
export interface UnindexedRead {
  collection: string;
  /** The filter, each value replaced by its type and each id in a path by `<id>` (secrets, personal data). */
  filter: unknown;
  sort?: Record<string, 1 | -1>;
  sql: string;
  /** The steps of `EXPLAIN QUERY PLAN`, as SQLite words them. */
  plan: string[];
}

/** At most this many distinct reads are checked: the report is a diagnostic, and its memory stays bounded. */
const MAX_CHECKED = 10_000;

/**
 * Finds the reads a growing collection makes slower with every row: the first time a read of one shape (its
 * statement, its filter's fields and operators, its sort) runs, SQLite's plan for it is read, and a plan that
 * scans the collection's table (row by row or along a whole index) is appended to `file` as one JSON line and
 * logged. Without a report no plan is read. The e2e harness turns it on for every embedded stack and fails a
 * suite whose services ran such a read; an operator can turn it on (`STORE_SCAN_REPORT_FILE`) to find what
 * makes a large data dir slow.
 */
export class ScanReport {
  private readonly checked = new Set<string>();

  constructor(
    readonly file: string,
    private readonly logger?: Logger,
  ) {}

  /**
   * `tableName` is the table as SQLite names it in a plan (unquoted); `plan` runs only for a new read. With an
   * empty filter the read is a sorted page of the whole collection, which may walk an index of its sort.
   */
  check(collection: string, tableName: string, sql: string, plan: () => string[], filter: object, sort?: Record<string, 1 | -1>): void {
    const page = Object.keys(filter).length === 0;
    const shape = shapeOf(filter, 0);
    // A filter SQL cannot express runs as the same statement as any other: the read is its filter's shape too.
    const key = `${sql}\0${JSON.stringify(shape)}\0${JSON.stringify(sort ?? null)}`;
    if (this.checked.has(key) || this.checked.size >= MAX_CHECKED) return;
    this.checked.add(key);
    const steps = plan();
    const scan = page ? (step: string) => step === `SCAN ${tableName}` : (step: string) => scansTable(step, tableName);
    if (!steps.some(scan)) return;
    const read: UnindexedRead = { collection, filter: shape, ...(sort ? { sort } : {}), sql, plan: steps };
    this.logger?.warn(read, 'a filtered read scans the whole collection: no index serves it');
    appendFileSync(this.file, `${JSON.stringify(read)}\n`);
  }
}

/** Field names and operators kept, values (and ids used as field names) replaced; deep or long filters are cut. */
function shapeOf(value: unknown, depth: number): unknown {
  if (Array.isArray(value)) return depth > 5 ? '[…]' : value.slice(0, 3).map((v) => shapeOf(v, depth + 1));
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  if (value instanceof Date) return 'date';
  if (depth > 5) return '{…}';
  return Object.fromEntries(Object.entries(value).slice(0, 20).map(([k, v]) => [k.split('.').map(nameOrId).join('.'), shapeOf(v, depth + 1)]));
}

/** A path segment that is a value (a key hash, a request id in `key_spend.<hash>`) rather than a field name. */
function nameOrId(segment: string): string {
  return segment.length >= 16 && /\d/.test(segment) ? '<id>' : segment;
}

function scansTable(step: string, tableName: string): boolean {
  const scanned = `SCAN ${tableName}`;
  return step === scanned || step.startsWith(`${scanned} `);
}
