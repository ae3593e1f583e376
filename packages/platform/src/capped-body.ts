/**
 * A body's chunks, refused with `tooLarge()` as soon as its declared length (`content-length`, checked before a byte
 * is read) or the bytes that have arrived pass `limit`. A refused body is dropped (`drop`), never read on. For
 * every body the gateway reads from another party: a provider's answer, a URL it fetches.
 */
export function cappedChunks<C extends Uint8Array>(
  body: AsyncIterable<C>,
  declaredLength: string | string[] | null | undefined,
  limit: number,
  tooLarge: () => Error,
  drop: () => void,
): AsyncGenerator<C> {
  if (declaredLengthOf(declaredLength) > limit) {
    drop();
    throw tooLarge();
  }
  return (async function* () {
    let size = 0;
    for await (const part of body) {
      size += part.length;
      if (size > limit) {
        drop();
        throw tooLarge();
      }
      yield part;
    }
  })();
}

/** A `content-length` as a number; NaN when there is none (a chunked body) or it is not one. */
export function declaredLengthOf(header: string | string[] | null | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined || value === null || value.trim() === '' ? NaN : Number(value);
}
