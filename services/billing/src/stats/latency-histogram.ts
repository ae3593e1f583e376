/**
 * Latency as counts in fixed logarithmic buckets: bucket i holds values in (G^(i-1), G^i] ms, with bucket 0
 * for 0-1 ms. Histograms of any two intervals merge exactly by adding counts (a minute's merges into an
 * hour's, a posting's into a minute's), which a sampled sketch would not; a percentile read from them is
 * within ~4.5% of the true value (G = 2^(1/8)).
 */
const GROWTH = 2 ** (1 / 8);
/** 2^(190/8) ms is ~4 months: every latency a call can have fits. */
const MAX_BUCKET = 190;

/**
 * Sparse counts by bucket, keyed `b<bucket>` (a field name every store engine takes, so a write can `$inc` one
 * bucket of a stored histogram).
 */
export type LatencyHistogram = Record<string, number>;

export function bucketOf(ms: number): number {
  if (!(ms > 1)) return 0;
  return Math.min(MAX_BUCKET, Math.ceil(Math.log(ms) / Math.log(GROWTH) - 1e-9));
}

/** The value a bucket reports: its geometric middle, rounded to whole ms (0 for the 0-1 ms bucket). */
function bucketValue(bucket: number): number {
  return bucket === 0 ? 0 : Math.round(GROWTH ** (bucket - 0.5));
}

export class HistogramBuilder {
  private readonly counts = new Map<number, number>();

  add(ms: number, times = 1): this {
    const b = bucketOf(ms);
    this.counts.set(b, (this.counts.get(b) ?? 0) + times);
    return this;
  }

  merge(h: LatencyHistogram | undefined): this {
    for (const [key, n] of Object.entries(h ?? {})) {
      const b = Number(key.slice(1));
      if (key.startsWith('b') && Number.isInteger(b) && n > 0) this.counts.set(b, (this.counts.get(b) ?? 0) + n);
    }
    return this;
  }

  toJSON(): LatencyHistogram {
    return Object.fromEntries(this.sorted().map(([b, n]) => [`b${b}`, n]));
  }

  private sorted(): [number, number][] {
    return [...this.counts.entries()].sort((a, b) => a[0] - b[0]);
  }

  /** The value below which `q` (0-1) of the observations fall; null with none. */
  quantile(q: number): number | null {
    const sorted = this.sorted();
    const total = sorted.reduce((sum, [, n]) => sum + n, 0);
    if (total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (const [b, n] of sorted) {
      seen += n;
      if (seen >= rank) return bucketValue(b);
    }
    return bucketValue(sorted[sorted.length - 1][0]);
  }
}
