import { DuplicateKeyError, type Store } from '@gw/store';

/** What one scope (a key, an account) used in one fixed window. */
export interface WindowTotals {
  requests: number;
  tokens: number;
}

/** Counters per scope and fixed window, shared by every edge instance that uses the same engine. */
export interface WindowCounters {
  /** Adds `delta` to the counters of `scope` in the window starting at `windowStart` (ms) and returns the totals after. */
  add(scope: string, windowStart: number, windowMs: number, delta: WindowTotals): Promise<WindowTotals>;
  /** Forgets windows that ended before `now`. */
  sweep(now: number): Promise<void>;
}

/** One edge instance (the single-machine mode): counters in this process's memory. */
export class MemoryWindowCounters implements WindowCounters {
  private readonly windows = new Map<string, WindowTotals & { windowEnd: number }>();

  async add(scope: string, windowStart: number, windowMs: number, delta: WindowTotals): Promise<WindowTotals> {
    const id = `${scope}|${windowStart}`;
    const w = this.windows.get(id) ?? { requests: 0, tokens: 0, windowEnd: windowStart + windowMs };
    w.requests += delta.requests;
    w.tokens += delta.tokens;
    this.windows.set(id, w);
    return { requests: w.requests, tokens: w.tokens };
  }

  async sweep(now: number): Promise<void> {
    for (const [id, w] of this.windows) if (w.windowEnd <= now) this.windows.delete(id);
  }
}

interface WindowDoc {
  _id: string;
  requests: number;
  tokens: number;
  window_end: number;
}

/**
 * Several edge instances (the distributed mode): one document per scope and window in the store, added to
 * by one atomic upsert, so every instance counts against the same totals.
 */
export class StoreWindowCounters implements WindowCounters {
  private readonly windows;

  constructor(store: Store) {
    this.windows = store.collection<WindowDoc>('edge_rate_windows');
  }

  async init(): Promise<void> {
    await this.windows.ensureIndex({ fields: { window_end: 1 } });
  }

  async add(scope: string, windowStart: number, windowMs: number, delta: WindowTotals): Promise<WindowTotals> {
    const upsert = () => this.windows.findOneAndUpdate(
      { _id: `${scope}|${windowStart}` },
      { $inc: { requests: delta.requests, tokens: delta.tokens }, $setOnInsert: { window_end: windowStart + windowMs } },
      { upsert: true, returnDocument: 'after' },
    );
    let doc: WindowDoc | null;
    try {
      doc = await upsert();
    } catch (err) {
      // Two instances opened the same window at once: the loser adds to the winner's document.
      if (!(err instanceof DuplicateKeyError)) throw err;
      doc = await upsert();
    }
    return { requests: doc?.requests ?? delta.requests, tokens: doc?.tokens ?? delta.tokens };
  }

  async sweep(now: number): Promise<void> {
    await this.windows.deleteMany({ window_end: { $lte: now } });
  }
}
