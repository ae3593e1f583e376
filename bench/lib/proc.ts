/** A process's resident memory and open file descriptors, read from Linux /proc (null once it is gone). */
import { readdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';

/** VmRSS of `/proc/<pid>/status`, in MB (10^6 bytes). */
export function rssMb(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
    const kb = line ? Number(line.split(/\s+/)[1]) : NaN;
    return Number.isFinite(kb) ? Math.round((kb * 1024) / 1e5) / 10 : null;
  } catch {
    return null;
  }
}

/** Entries of `/proc/<pid>/fd`: sockets, files, pipes, epoll and event fds the process holds open. */
export function fdCount(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

export function machine(): { nproc: number; cpu: string | null; mem_total_gib: number; node: string; platform: string } {
  return {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? null,
    mem_total_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}
