/** The benchmark's child processes: started with their output kept, stopped on exit, errors and signals. */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export interface Child {
  name: string;
  proc: ChildProcess;
  tail: string[];
  exited: Promise<void>;
}


const children: Child[] = [];
let tempDir: string | null = null;
let cleaning: Promise<void> | null = null;
/** Load generators still running when cleanup starts (stopped first, so they release their sockets). */
const stopHooks: Array<() => void> = [];

export function setTempDir(dir: string | null): void {
  tempDir = dir;
}

export function onCleanup(stop: () => void): () => void {
  stopHooks.push(stop);
  return () => void stopHooks.splice(stopHooks.indexOf(stop), 1);
}

/** Forgets a child that failed to start (so cleanup does not wait on it again). */
export function forgetChild(c: Child): void {
  children.splice(children.indexOf(c), 1);
}

/** `cwd` is the tree the child runs from (tsx reads its tsconfig there): this checkout unless given. */
export function startChild(name: string, nodeArgs: string[], env: NodeJS.ProcessEnv, ipc = false, cwd = ROOT): Child {
  const proc = spawn(process.execPath, nodeArgs, { cwd, env, stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc' as const] : [])] });
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) tail.push(line);
    if (tail.length > 60) tail.splice(0, tail.length - 60);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const child = { name, proc, tail, exited };
  children.push(child);
  return child;
}

export const alive = (c: Child) => c.proc.exitCode === null && c.proc.signalCode === null;

export async function stopChild(c: Child, graceMs: number): Promise<void> {
  if (!alive(c)) return;
  c.proc.kill('SIGTERM');
  const timer = setTimeout(() => { if (alive(c)) c.proc.kill('SIGKILL'); }, graceMs);
  await c.exited;
  clearTimeout(timer);
}

export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const stop of [...stopHooks]) stop();
    // The gateway first (it may be writing a CPU profile), then the simulator.
    for (const c of [...children].reverse()) await stopChild(c, 15_000);
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    tempDir = null;
  })();
  return cleaning;
}


/** Registers the last-resort kill on exit and the clean stop on Ctrl-C / SIGTERM. */
export function installExitHandlers(): void {
  process.on('exit', () => {
    for (const c of children) if (alive(c)) c.proc.kill('SIGKILL');
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  });
  for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(sig, () => {
      process.stderr.write(`\n${sig}: stopping the simulator and the gateway...\n`);
      cleanup().finally(() => process.exit(code));
    });
  }

}

export function logTails(): string {
  return children.map((c) => `--- ${c.name} (last lines) ---\n${c.tail.slice(-25).join('\n') || '(no output)'}`).join('\n');
}

/**
 * Runs a benchmark's `main` and exits with its code; a failure prints `what failed`, the stack and the children's
 * last lines, stops everything and exits 1.
 */
export function runBenchmark(what: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    async (err: unknown) => {
      process.stderr.write(`${what} failed: ${(err as Error)?.stack ?? err}\n${logTails()}\n`);
      await cleanup();
      process.exit(1);
    },
  );
}
