/** Per-process CPU time from /proc, idle waits, percentiles and rounding for the result tables. */
import { readdirSync, readFileSync } from 'node:fs';
import { sleep } from './net';

/** utime + stime of a process in clock ticks (Linux; USER_HZ is 100 on every mainstream kernel). */
export const TICKS_PER_S = 100;
export function cpuTicks(pid: number | undefined): number | null {
  return pid === undefined ? null : ticksOf(`/proc/${pid}/stat`);
}

/** The same for a process's main thread alone (its event loop), without its worker and helper threads. */
export function mainThreadTicks(pid: number | undefined): number | null {
  return pid === undefined ? null : ticksOf(`/proc/${pid}/task/${pid}/stat`);
}

/** CPU microseconds per call of `ticks` over `calls`; null when either is unknown or there were no calls. */
export function microsPerCall(ticks: number | null | undefined, calls: number, digits = 0): number | null {
  return ticks === null || ticks === undefined || calls <= 0 ? null : round((ticks / TICKS_PER_S / calls) * 1e6, digits);
}

/**
 * CPU ticks of a process's threads summed by thread name: `MainThread` (the event loop), each named worker
 * (`billing`, `wal-checkpoint`), `V8Worker` (the garbage collector's and compiler's helpers), `libuv-worker` (file
 * and DNS work). A thread that ended between two readings drops out of the difference.
 */
export function threadTicksByName(pid: number | undefined): Record<string, number> | null {
  if (pid === undefined) return null;
  try {
    const byName: Record<string, number> = {};
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      byName[name] = (byName[name] ?? 0) + ticksIn(stat);
    }
    return byName;
  } catch {
    return null;
  }
}

/** What each thread name used between two `threadTicksByName` readings (names that appeared later start at 0). */
export function threadTicksDelta(before: Record<string, number> | null, after: Record<string, number> | null): Record<string, number> | null {
  if (!before || !after) return null;
  return Object.fromEntries(Object.entries(after).map(([name, ticks]) => [name, Math.max(0, ticks - (before[name] ?? 0))]));
}

/** utime + stime of a `/proc/.../stat` line (the fields after the parenthesised name). */
function ticksIn(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function ticksOf(statFile: string): number | null {
  try {
    return ticksIn(readFileSync(statFile, 'utf8'));
  } catch {
    return null;
  }
}

/** Waits until the gateway's background work (usage events, billing) has drained, so it does not bleed into the next run. */
export async function settle(pid: number | undefined, maxMs = 15_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let last = cpuTicks(pid);
  if (last === null) return void (await sleep(1000));
  while (Date.now() < deadline) {
    await sleep(250);
    const now = cpuTicks(pid);
    if (now === null) return;
    if (now - last <= 2) return; // under ~8% of a core over the last 250 ms
    last = now;
  }
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export const round = (n: number, digits: number) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);
