/** One closed-loop run of the same request with autocannon (keep-alive), with every response time and the CPU used. */
import autocannon from 'autocannon';
import { onCleanup } from './children';
import { withTimeout } from './net';
import { cpuTicks, threadTicksByName, threadTicksDelta } from './stats';

/** The processes whose CPU time each run records. */
export type Pids = Record<string, number | undefined>;

export interface UnaryTarget<P extends string = string> {
  path: P;
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface Segment {
  durationS: number;
  completed2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Every 2xx response time, ms. */
  latencies: number[];
  /** CPU clock ticks each of `pids` used during the run. */
  cpuTicks: Record<string, number | null>;
  /** CPU clock ticks of the `threadsOf` process's threads by name (see `threadTicksByName`); null when not asked. */
  threadTicks: Record<string, number> | null;
  benchCpuUs: number;
}

/** `threadsOf`: a process (of `pids` or not) whose CPU is also recorded per thread. */
export async function unaryLoad(target: UnaryTarget, connections: number, durationS: number, pids: Pids, threadsOf?: number): Promise<Segment> {
  const latencies: number[] = [];
  const ticks0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTicks(pid)]));
  const threads0 = threadTicksByName(threadsOf);
  const bench0 = process.cpuUsage();
  const inst = autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: target.body,
    connections,
    duration: durationS,
    pipelining: 1,
    timeout: 10,
  });
  const forget = onCleanup(() => inst.stop());
  // autocannon's own histogram has 1 ms resolution; keep every 2xx response time (hrtime, ms) instead.
  inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const r = await withTimeout(inst, (durationS + 30) * 1000, `autocannon ${target.path} x${connections}`);
  forget();
  const bench = process.cpuUsage(bench0);
  const ticks: Record<string, number | null> = {};
  for (const [k, pid] of Object.entries(pids)) {
    const [a, b] = [ticks0[k], cpuTicks(pid)];
    ticks[k] = a !== null && b !== null ? b - a : null;
  }
  const threadTicks = threadTicksDelta(threads0, threadTicksByName(threadsOf));
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(r.statusCodeStats)) statusCodes[code] = count;
  return {
    durationS: r.duration,
    completed2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    latencies,
    cpuTicks: ticks,
    threadTicks,
    benchCpuUs: bench.user + bench.system,
  };
}
