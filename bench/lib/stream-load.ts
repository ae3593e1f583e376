/**
 * Closed-loop load for streaming chat: `connections` loops, each sending one `stream: true` request at a
 * time on a keep-alive pool until the duration is up, timing every request with process.hrtime from its
 * start to the first `data:` chunk that carries content (time to first token) and to the end of the
 * stream. autocannon cannot see inside a response body, hence this driver. Every loop finishes the
 * request it has started, so nothing is abandoned in flight: each answered stream is counted.
 */
import { Pool } from 'undici';
import { onCleanup } from './children';
import { cpuTicks, percentile, round, TICKS_PER_S } from './stats';

export interface StreamTarget {
  path: string;
  origin: string;
  pathname: string;
  headers: Record<string, string>;
  body: string;
}

export interface StreamSegment {
  durationS: number;
  completed: number;
  failed: number;
  statusCodes: Record<string, number>;
  ttftMs: number[];
  totalMs: number[];
  cpuTicks: Record<string, number | null>;
  benchCpuUs: number;
}

/** True when an SSE `data:` payload is a chunk whose first choice carries non-empty content. */
export function carriesContent(payload: string): boolean {
  if (payload === '[DONE]') return false;
  try {
    const chunk = JSON.parse(payload) as { choices?: Array<{ delta?: { content?: unknown } }> };
    const content = chunk.choices?.[0]?.delta?.content;
    return typeof content === 'string' && content.length > 0;
  } catch {
    return false;
  }
}

const msSince = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

type StreamResult = { status: number; ttft: number; total: number } | { status: number; failed: true };

/** One streaming request on its own connection (the probes before a run). */
export async function oneStream(t: StreamTarget): Promise<StreamResult> {
  const pool = new Pool(t.origin, { connections: 1 });
  try {
    return await timedStream(pool, t);
  } finally {
    await pool.close();
  }
}

/** One streaming request: its TTFT and total time, or `failed` (with the status) when it did not complete. */
export async function timedStream(pool: Pool, t: StreamTarget): Promise<StreamResult> {
  const t0 = process.hrtime.bigint();
  const res = await pool.request({ path: t.pathname, method: 'POST', headers: t.headers, body: t.body, headersTimeout: 10_000, bodyTimeout: 10_000 });
  if (res.statusCode !== 200) {
    await res.body.dump();
    return { status: res.statusCode, failed: true };
  }
  let ttft = -1;
  let done = false;
  let pending = '';
  for await (const chunk of res.body) {
    pending += (chunk as Buffer).toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (!line.startsWith('data:')) continue;
      const payload = line.slice(5).trim();
      if (payload === '[DONE]') done = true;
      else if (ttft < 0 && carriesContent(payload)) ttft = msSince(t0);
    }
  }
  const total = msSince(t0);
  return ttft >= 0 && done ? { status: 200, ttft, total } : { status: 200, failed: true };
}

export async function streamLoad(t: StreamTarget, connections: number, durationS: number, pids: Record<string, number | undefined>): Promise<StreamSegment> {
  const pool = new Pool(t.origin, { connections, pipelining: 1 });
  const seg: StreamSegment = { durationS: 0, completed: 0, failed: 0, statusCodes: {}, ttftMs: [], totalMs: [], cpuTicks: {}, benchCpuUs: 0 };
  const ticks0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTicks(pid)]));
  const bench0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  const endAt = Date.now() + durationS * 1000;
  let stopped = false;
  const forget = onCleanup(() => { stopped = true; });
  const loop = async () => {
    while (!stopped && Date.now() < endAt) {
      try {
        const r = await timedStream(pool, t);
        seg.statusCodes[r.status] = (seg.statusCodes[r.status] ?? 0) + 1;
        if ('failed' in r) seg.failed++;
        else {
          seg.completed++;
          seg.ttftMs.push(r.ttft);
          seg.totalMs.push(r.total);
        }
      } catch {
        seg.failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  seg.durationS = msSince(start) / 1000;
  forget();
  const bench = process.cpuUsage(bench0);
  seg.benchCpuUs = bench.user + bench.system;
  for (const [k, pid] of Object.entries(pids)) {
    const a = ticks0[k];
    const b = cpuTicks(pid);
    seg.cpuTicks[k] = a !== null && b !== null ? b - a : null;
  }
  await pool.close();
  return seg;
}

export interface StreamRow {
  connections: number;
  path: string;
  streams_per_s: number | null;
  ttft_p50_ms: number | null;
  ttft_p99_ms: number | null;
  total_p50_ms: number | null;
  total_p99_ms: number | null;
  completed: number;
  failed: number;
  status_codes: Record<string, number>;
  seconds: number;
  cpu_percent: Record<string, number | null>;
}

const sorted = (xs: number[]) => Float64Array.from(xs).sort();

export function summarizeStreams(connections: number, pathName: string, segs: StreamSegment[]): StreamRow {
  const seconds = segs.reduce((s, x) => s + x.durationS, 0);
  const ttft = sorted(segs.flatMap((s) => s.ttftMs));
  const total = sorted(segs.flatMap((s) => s.totalMs));
  const completed = segs.reduce((n, s) => n + s.completed, 0);
  const statusCodes: Record<string, number> = {};
  for (const s of segs) for (const [k, v] of Object.entries(s.statusCodes)) statusCodes[k] = (statusCodes[k] ?? 0) + v;
  const cpu: Record<string, number | null> = {};
  for (const k of Object.keys(segs[0]?.cpuTicks ?? {})) {
    const ticks = segs.map((s) => s.cpuTicks[k]);
    cpu[k] = ticks.some((x) => x === null || x === undefined) ? null : round((ticks.reduce<number>((a, b) => a + (b ?? 0), 0) / TICKS_PER_S / seconds) * 100, 0);
  }
  cpu.bench = round((segs.reduce((n, s) => n + s.benchCpuUs, 0) / 1e6 / seconds) * 100, 0);
  return {
    connections,
    path: pathName,
    streams_per_s: round(completed / seconds, 0),
    ttft_p50_ms: round(percentile(ttft, 50), 3),
    ttft_p99_ms: round(percentile(ttft, 99), 3),
    total_p50_ms: round(percentile(total, 50), 3),
    total_p99_ms: round(percentile(total, 99), 3),
    completed,
    failed: segs.reduce((n, s) => n + s.failed, 0),
    status_codes: statusCodes,
    seconds: round(seconds, 2)!,
    cpu_percent: cpu,
  };
}
