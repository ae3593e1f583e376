/**
 * The gateway under soak: `startLocalStack` (every service in one process, embedded engines) on the data dir
 * the soak passes, reporting over IPC when it is ready (with how long the stack took to start on the data
 * present) and, when asked, its memory after a full collection (with --expose-gc). Stops on SIGTERM or when the soak goes away.
 */
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
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ type: 'memory', memory: process.memoryUsage() });
  });
  process.send?.({ type: 'ready', edgePort: stack.edge.httpPort, startupMs });
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway failed to start: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
