/**
 * The steady soak's verdicts, from its 30 s samples. Windows of the run:
 * - warm-up: the first min(5 min, duration / 4), left out (JIT, connection pools, caches filling);
 * - plateau: from there to min(10 min, duration / 2): the reference;
 * - end: the last min(5 min, duration / 6).
 * RSS: the median of the summed RSS over the end against the plateau's, at most +10%.
 * File descriptors: for every process, the median it held over the end window at most FD_SLACK above the
 * plateau's median (sockets come and go with the concurrency of the moment; a leak grows without bound). The
 * process holding the edge counts without the load's own connections to it, which vary with latency spikes.
 * p99: the median of the windows' p99 over the end at most max(1.5 x, +5 ms) of the plateau's.
 * Errors: none (non-2xx, failed or incomplete streams, network errors), and no call dropped by the in-flight valve.
 */
import { round } from './stats';

export const RSS_GROWTH_MAX = 0.1;
export const FD_SLACK = 8;
export const P99_RATIO_MAX = 1.5;
export const P99_SLACK_MS = 5;

export interface Sample {
  t_s: number;
  rss_mb: Record<string, number | null>;
  rss_sum_mb: number;
  fds: Record<string, number | null>;
  load_connections: number;
  p99_ms: number | null;
}

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return round(s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2, 2);
};
const defined = (xs: Array<number | null | undefined>) => xs.filter((x): x is number => typeof x === 'number');

/** Least-squares slope of y over t, per hour (t in seconds). */
function slopePerHour(points: Array<[number, number]>): number | null {
  if (points.length < 3) return null;
  const n = points.length;
  const mt = points.reduce((s, [t]) => s + t, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [t, y]) => s + (t - mt) * (y - my), 0);
  const den = points.reduce((s, [t]) => s + (t - mt) ** 2, 0);
  return den > 0 ? round((num / den) * 3600, 2) : null;
}

export function verdicts(samples: Sample[], edgeProcess: string, durationS: number, errors: number, dropped: number) {
  const warmupEnd = Math.min(300, durationS / 4);
  const plateauEnd = Math.min(600, durationS / 2);
  const endStart = durationS - Math.min(300, durationS / 6);
  const plateau = samples.filter((s) => s.t_s > warmupEnd && s.t_s <= plateauEnd);
  const end = samples.filter((s) => s.t_s > endStart);
  const afterWarmup = samples.filter((s) => s.t_s > warmupEnd);
  const names = Object.keys(samples[0]?.rss_mb ?? {});

  const growth = (a: number | null, b: number | null) => (a !== null && b !== null && a > 0 ? round(b / a - 1, 4) : null);
  const rssPlateau = median(plateau.map((s) => s.rss_sum_mb));
  const rssEnd = median(end.map((s) => s.rss_sum_mb));
  const rssGrowth = growth(rssPlateau, rssEnd);
  const perProcess = Object.fromEntries(names.map((n) => {
    const a = median(defined(plateau.map((s) => s.rss_mb[n])));
    const b = median(defined(end.map((s) => s.rss_mb[n])));
    return [n, { plateau_mb: a, end_mb: b, growth: growth(a, b), slope_mb_per_h: slopePerHour(afterWarmup.flatMap((s) => (s.rss_mb[n] == null ? [] : [[s.t_s, s.rss_mb[n]!] as [number, number]]))) }];
  }));

  const ownFds = (s: Sample, n: string) => (s.fds[n] == null ? null : s.fds[n]! - (n === edgeProcess ? s.load_connections : 0));
  const fdRows = Object.fromEntries(names.map((n) => {
    const a = median(defined(plateau.map((s) => ownFds(s, n))));
    const b = median(defined(end.map((s) => ownFds(s, n))));
    return [n, {
      plateau_median: a, end_median: b, growth: a !== null && b !== null ? b - a : null,
      min: Math.min(...defined(afterWarmup.map((s) => ownFds(s, n)))), max: Math.max(...defined(afterWarmup.map((s) => ownFds(s, n)))),
    }];
  }));
  const fdOk = Object.values(fdRows).every((r) => r.growth !== null && r.growth <= FD_SLACK);

  const p99Plateau = median(defined(plateau.map((s) => s.p99_ms)));
  const p99End = median(defined(end.map((s) => s.p99_ms)));
  const p99Limit = p99Plateau === null ? null : Math.max(p99Plateau * P99_RATIO_MAX, p99Plateau + P99_SLACK_MS);

  return {
    windows: { warmup_end_s: warmupEnd, plateau_s: [warmupEnd, plateauEnd], end_s: [endStart, durationS], plateau_samples: plateau.length, end_samples: end.length },
    rss: {
      criterion: `median summed RSS over the end window <= plateau median x ${1 + RSS_GROWTH_MAX}`,
      plateau_sum_mb: rssPlateau, end_sum_mb: rssEnd, growth: rssGrowth,
      slope_sum_mb_per_h: slopePerHour(afterWarmup.map((s) => [s.t_s, s.rss_sum_mb])),
      per_process: perProcess,
      processes_over_limit: Object.entries(perProcess).filter(([, r]) => r.growth !== null && r.growth > RSS_GROWTH_MAX).map(([n]) => n),
      ok: rssGrowth !== null && rssGrowth <= RSS_GROWTH_MAX,
    },
    fds: { criterion: `per process: median open fds (the edge's without the load's connections) over the end window <= plateau median + ${FD_SLACK}`, per_process: fdRows, ok: fdOk },
    p99: {
      criterion: `median of the 30 s windows' p99 over the end window <= max(${P99_RATIO_MAX} x, +${P99_SLACK_MS} ms) of the plateau's`,
      plateau_ms: p99Plateau, end_ms: p99End, limit_ms: p99Limit === null ? null : round(p99Limit, 2),
      slope_ms_per_h: slopePerHour(afterWarmup.flatMap((s) => (s.p99_ms === null ? [] : [[s.t_s, s.p99_ms] as [number, number]]))),
      ok: p99End !== null && p99Limit !== null && p99End <= p99Limit,
    },
    errors: { criterion: 'no failed call and none dropped by the in-flight valve', errors, dropped, ok: errors === 0 && dropped === 0 },
  };
}
