import { mongo } from 'mongoose';
import { DuplicateKeyError } from '../port';

/** Server codes for a unique-index violation (11001 and 12582 are legacy variants of 11000). */
const DUPLICATE_KEY_CODES = new Set([11000, 11001, 12582]);

export function isDuplicateKeyCode(code: unknown): boolean {
  return typeof code === 'number' && DUPLICATE_KEY_CODES.has(code);
}

/** `DuplicateKeyError` for a driver error that reports a unique-index violation; anything else unchanged. */
export function mapDuplicateKey(err: unknown, collection: string): unknown {
  if (!(err instanceof mongo.MongoError) || !isDuplicateKeyCode(err.code)) return err;
  const keyValue = (err as { keyValue?: unknown }).keyValue;
  const detail = keyValue ? `key ${JSON.stringify(keyValue)}` : (/dup key: .*/.exec(err.message)?.[0] ?? '');
  return new DuplicateKeyError(collection, detail);
}

/**
 * Indexes (into the inserted batch) of the documents an unordered insert skipped as duplicates, or null when
 * the error is anything but duplicates only.
 */
export function duplicateIndexes(err: unknown): number[] | null {
  if (!(err instanceof mongo.MongoBulkWriteError)) return null;
  const writeErrors = ([] as mongo.WriteError[]).concat(err.writeErrors ?? []);
  if (writeErrors.length === 0 || !writeErrors.every((e) => isDuplicateKeyCode(e.code))) return null;
  if (err.result?.getWriteConcernError?.()) return null;
  return writeErrors.map((e) => e.index);
}
