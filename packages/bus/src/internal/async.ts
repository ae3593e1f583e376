/**
 * Consecutive slices of at most `maxCount` items whose sizes sum to at most `maxBytes`; an item larger than
 * `maxBytes` is a slice of its own (it has to go somewhere).
 */
export function chunkWithin<T>(items: T[], maxCount: number, maxBytes: number, sizeOf: (item: T) => number): T[][] {
  const n = Math.max(1, Math.floor(maxCount));
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (current.length > 0 && (current.length >= n || bytes + size > maxBytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** Resolves after `ms`, or early (without throwing) when `signal` aborts, so shutdown never waits out a back-off. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Exponential back-off for redelivery after a failed handler. */
export class Backoff {
  private attempt = 0;
  constructor(private readonly initialMs = 200, private readonly maxMs = 5_000) {}

  next(): number {
    const ms = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return ms;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Rejects with `message` if `promise` has not settled within `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A promise chain per key: tasks with one key run one after another, in call order. */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const result = prev.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
