/** Per-process CPU time from /proc, idle waits, percentiles and rounding for the result tables. */
import { readFileSync } from 'node:fs';
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

function ticksOf(statFile: string): number | null {
  try {
    const stat = readFileSync(statFile, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
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
