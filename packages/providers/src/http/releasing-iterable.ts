import type { Readable } from 'node:stream';
import type { Deadline } from './deadline';

/** Gives an answer's connection back (its body destroyed unless it ended) and releases its deadline. */
export function releaseAnswer(body: Readable, deadline: Deadline): void {
  if (!body.destroyed) {
    // undici reports a destroy before the end as an 'error' event; nobody is left to hear it.
    body.on('error', () => {});
    body.destroy();
  }
  deadline.dispose();
}

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
