/**
 * The gateway under soak: `startLocalStack` (every service in one process, embedded engines) on the data dir
 * the soak passes, reporting over IPC when it is ready (with how long the stack took to start on the data
 * present) and, when asked, its memory after a full collection (with --expose-gc), each thread's heap apart. Stops on SIGTERM or when the soak goes away.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createLogger } from '@gw/platform';
import { startLocalStack } from '@gw/local-stack';

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) throw new Error('DATA_DIR must be set (the soak passes its data dir)');
  const logger = createLogger(null, process.env.LOG_LEVEL ?? 'warn');
  const started = performance.now();
  const stack = await startLocalStack({ dataDir, env: process.env, logger });
  const startupMs = performance.now() - started;

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(1), 15_000).unref();
    stack.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
  process.on('message', (m: { type?: string }) => {
    if (m?.type !== 'memory') return;
    // Each thread collects before it measures; the RSS is the whole process's.
    void stack.heaps().then((heaps) => {
      const { rss, external } = process.memoryUsage();
      process.send?.({ type: 'memory', memory: { rss, external, heaps } });
    });
  });
  const traceFile = process.env.SOAK_MEMORY_TRACE;
  if (traceFile) {
    setInterval(() => {
      const m = process.memoryUsage();
      appendFileSync(traceFile, `${JSON.stringify({ t: Date.now(), rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers })}\n`);
    }, 1000).unref();
  }
  const profileFile = process.env.SOAK_ALLOCATION_PROFILE;
  if (profileFile) profileAllocations(profileFile, process.env.SOAK_ALLOCATION_WINDOW ?? '55-70', started);
  process.send?.({ type: 'ready', edgePort: stack.edge.httpPort, startupMs });
}

/**
 * V8's sampling heap profiler over a window of seconds after `started`, keeping samples of objects already
 * collected: what a burst allocated, not only what outlived it (a .heapprofile, which Chrome DevTools opens).
 */
function profileAllocations(file: string, window: string, started: number): void {
  const [from, to] = window.split('-').map(Number);
  if (!(from >= 0 && to > from)) throw new Error(`SOAK_ALLOCATION_WINDOW must be FROM-TO in seconds, got "${window}"`);
  const session = new Session();
  session.connect();
  const sinceStart = performance.now() - started;
  setTimeout(() => {
    void session.post('HeapProfiler.startSampling', { samplingInterval: 65_536, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    setTimeout(() => {
      void session.post('HeapProfiler.stopSampling').then(({ profile }) => writeFileSync(file, JSON.stringify(profile)));
    }, (to - from) * 1000);
  }, Math.max(0, from * 1000 - sinceStart));
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway failed to start: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
