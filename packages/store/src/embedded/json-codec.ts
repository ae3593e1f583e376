import type { PlainObject } from '../semantics/values';

/**
 * Documents as JSON text in SQLite. JSON has no date type, so a date is written as `{"$date": <epoch ms>}` and
 * read back as a `Date`; stored field names never start with `$` (the port's documents are MongoDB's), so the
 * marker cannot be mistaken for data.
 */

const DATE_KEY = '$date';

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Date ? { [DATE_KEY]: raw.getTime() } : value;
}

function reviver(_key: string, value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === DATE_KEY && typeof (value as PlainObject)[DATE_KEY] === 'number') {
      return new Date((value as PlainObject)[DATE_KEY] as number);
    }
  }
  return value;
}

/** Whether a date is anywhere in `v`: a walk costs far less than a replacer, which V8 calls for every value. */
function holdsDate(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (v instanceof Date) return true;
  if (Array.isArray(v)) return v.some(holdsDate);
  for (const k in v) if (holdsDate((v as PlainObject)[k])) return true;
  return false;
}

export function encodeDoc(doc: PlainObject): string {
  return holdsDate(doc) ? JSON.stringify(doc, replacer) : JSON.stringify(doc);
}

/** Text `encodeDoc` wrote; anything else (a file edited by hand, a torn page) is named, never returned. */
export function decodeDoc(text: string, where: string): PlainObject {
  try {
    // The reviver walks every value; only text holding a date marker needs it.
    return (text.includes(`"${DATE_KEY}"`) ? JSON.parse(text, reviver) : JSON.parse(text)) as PlainObject;
  } catch (err) {
    throw new Error(`Stored document in ${where} is not JSON`, { cause: err });
  }
}
