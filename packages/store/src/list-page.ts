import { InputError } from '@gw/platform';
import type { Collection, Doc, Filter } from './port';

/** The list shape of the list endpoints (files, batches, images; API-NOTES, list endpoints). */
export interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export interface PageQuery {
  after?: string;
  limit: number;
  /** `desc` (newest first) unless the caller asks for `asc`. */
  order?: 'asc' | 'desc';
}

const MAX_LIMIT = 100;
/** The longest id a list holds: a delivery attempt's `{event_id}:{attempt}` with an event id of up to 256. */
const MAX_AFTER = 300;

/** `after`, `limit` and `order` from a query string, refused with a 400 naming the parameter. */
export function pageQuery(query: Record<string, unknown>): PageQuery {
  const { after, limit, order } = query;
  if (order !== undefined && order !== 'asc' && order !== 'desc') throw new InputError('order must be asc or desc', 'order');
  if (after !== undefined && (typeof after !== 'string' || after.length === 0 || after.length > MAX_AFTER)) throw new InputError('after must be an id', 'after');
  let n = 20;
  if (limit !== undefined) {
    n = typeof limit === 'string' && /^\d{1,6}$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= MAX_LIMIT)) throw new InputError(`limit must be an integer from 1 to ${MAX_LIMIT}`, 'limit');
  }
  return { after: after as string | undefined, limit: n, order: order ?? 'desc' };
}

/** The field a list is ordered by: each item's time in epoch milliseconds. */
type TimeField<D> = { [K in keyof D]: D[K] extends number ? K : never }[keyof D] & string;

/**
 * Newest first (oldest with `order: 'asc'`) by `timeField`, ties broken by id, so the cursor is stable; `after`
 * names the last item of the previous page (an id outside `scope` is a 400: a cursor from someone else's list
 * tells nothing).
 */
export async function listPage<D extends Doc, T extends { id: string }>(
  collection: Collection<D>, scope: Filter, query: PageQuery, view: (doc: D) => T,
  timeField: TimeField<D> = 'created_at_ms' as TimeField<D>,
): Promise<ListPage<T>> {
  const [beyond, direction] = query.order === 'asc' ? ['$gt', 1] as const : ['$lt', -1] as const;
  let filter: Filter = scope;
  if (query.after !== undefined) {
    const cursor = await collection.findOne({ ...scope, _id: query.after });
    if (!cursor) throw new InputError(`after names no item of this list: ${query.after}`, 'after');
    const at = cursor[timeField];
    filter = { ...scope, $or: [{ [timeField]: { [beyond]: at } }, { [timeField]: at, _id: { [beyond]: cursor._id } }] };
  }
  const docs = await collection.find(filter, { sort: { [timeField]: direction, _id: direction }, limit: query.limit + 1 });
  const data = docs.slice(0, query.limit).map(view);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: docs.length > query.limit };
}
