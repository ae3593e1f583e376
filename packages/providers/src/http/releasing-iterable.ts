/**
 * Wraps a generator so that ending iteration early, even before the first `next()` (when a generator's own
 * `finally` would never run), still releases the upstream connection.
 */
export function releasingIterable<T>(gen: AsyncGenerator<T>, release: () => void): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => gen.next(),
      return: async (value?: unknown) => {
        release();
        return gen.return(value as T);
      },
      throw: async (err?: unknown) => {
        release();
        return gen.throw(err);
      },
    }),
  };
}
