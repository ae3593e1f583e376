import { randomUUID } from 'node:crypto';

/** The port's `_id` rule: always a non-empty string chosen by the caller. */
export function requireStringId(doc: unknown, collection: string): void {
  const id = (doc as { _id?: unknown } | null)?._id;
  if (typeof id !== 'string' || id === '') {
    throw new TypeError(`A document in ${collection} needs a non-empty string _id`);
  }
}

/** `_id` for a document created by an upsert whose filter does not fix one (MongoDB would use an ObjectId). */
export function newId(): string {
  return randomUUID();
}
