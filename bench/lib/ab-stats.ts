/** The A/B comparison's figures: one slice of load, a side's pooled figures, and candidate/base ratios. */
import { round } from './stats';

export interface Slice {
  /** The pair of gateway processes it ran on (both are restarted between generations). */
  generation: number;
  pair: number;
  rps: number;
  p50_ms: number | null;
  answered: number;
  failed: number;
  /** CPU of the gateway process per answered call, from the slice's start until its background work drained. */
  cpu_us_per_call: number | null;
  /** The part of it on the main thread (the edge, inference and the other services but billing). */
  main_thread_us_per_call: number | null;
  /** The billing worker thread's part (the single-process gateway runs billing on a thread named `billing`). */
  billing_thread_us_per_call: number | null;
}

/** Over a side's slices: mean rate, median p50, CPU per call weighted by the slices' calls. */
export interface Pooled {
  rps: number | null;
  p50_ms: number | null;
  cpu_us_per_call: number | null;
  main_thread_us_per_call: number | null;
  billing_thread_us_per_call: number | null;
}

export interface RatioSummary {
  /** The geometric mean of the generations' ratios (each the geometric mean of its pairs' candidate / base). */
  geomean: number | null;
  /** Two standard errors either side, over the generations (over the pairs when there is one generation). */
  low: number | null;
  high: number | null;
  /** The lowest and highest single pair. */
  min: number | null;
  max: number | null;
  candidate_won: number;
  pairs: number;
  generations: number;
}

export const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export function pooled(xs: Slice[]): Pooled {
  const calls = xs.reduce((n, s) => n + s.answered, 0);
  const perCall = (f: (s: Slice) => number | null) => (calls > 0 && xs.every((s) => f(s) !== null) ? round(xs.reduce((n, s) => n + f(s)! * s.answered, 0) / calls, 1) : null);
  return {
    rps: xs.length ? round(xs.reduce((n, s) => n + s.rps, 0) / xs.length, 0) : null,
    p50_ms: round(median(xs.map((s) => s.p50_ms ?? NaN)) ?? NaN, 3),
    cpu_us_per_call: perCall((s) => s.cpu_us_per_call),
    main_thread_us_per_call: perCall((s) => s.main_thread_us_per_call),
    billing_thread_us_per_call: perCall((s) => s.billing_thread_us_per_call),
  };
}

const meanOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const standardError = (xs: number[]) => {
  if (xs.length < 2) return NaN;
  const m = meanOf(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length);
};

/**
 * Candidate / base of each pair (slices matched by generation and pair), on the log scale. A process has a speed
 * of its own (where its threads run, what its JIT made of the code): pairs on the same two processes share it, so
 * the interval is taken over the generations, each process pair one sample, not over the pairs.
 */
export function ratioSummary(base: Slice[], candidate: Slice[], value: (s: Slice) => number | null, lowerWins: boolean): RatioSummary {
  const byGeneration = new Map<number, number[]>();
  const all: number[] = [];
  for (const b of base) {
    const c = candidate.find((s) => s.generation === b.generation && s.pair === b.pair);
    const [vb, vc] = [value(b), c ? value(c) : null];
    if (vb === null || vc === null || !(vb > 0) || !(vc > 0)) continue;
    const logRatio = Math.log(vc / vb);
    all.push(logRatio);
    byGeneration.set(b.generation, [...(byGeneration.get(b.generation) ?? []), logRatio]);
  }
  const generationMeans = [...byGeneration.values()].map(meanOf);
  const samples = generationMeans.length > 1 ? generationMeans : all;
  const mean = samples.length ? meanOf(samples) : NaN;
  const se = standardError(samples);
  return {
    geomean: round(Math.exp(mean), 3),
    low: round(Math.exp(mean - 2 * se), 3),
    high: round(Math.exp(mean + 2 * se), 3),
    min: round(Math.exp(Math.min(...all)), 3),
    max: round(Math.exp(Math.max(...all)), 3),
    candidate_won: all.filter((r) => (lowerWins ? r < 0 : r > 0)).length,
    pairs: all.length,
    generations: generationMeans.length,
  };
}
