/**
 * The gateway under test as its own process: every service in one process with the embedded engines
 * (`startLocalStack`), configured only by the environment the benchmark passes (ports, seed account,
 * catalogue, DATA_DIR). Prints one `gateway ready` line (and sends `{ ready }` over IPC when spawned with
 * a channel) once the edge listens; stops cleanly on SIGTERM/SIGINT or when the parent goes away, so
 * `node --cpu-prof` can write its profile on the way out.
 */
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import { createLogger } from '@gw/platform';
import { startLocalStack } from '@gw/local-stack';

const STOP_TIMEOUT_MS = 15_000;

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) throw new Error('DATA_DIR must be set (the benchmark passes a temp dir)');
  const logger = createLogger(null, process.env.LOG_LEVEL ?? 'warn');
  const stack = await startLocalStack({ dataDir, env: process.env, logger });

  let stopping = false;
  const stop = (code: number, orphaned = false) => {
    if (stopping) return;
    stopping = true;
    const hard = setTimeout(() => process.exit(code || 1), STOP_TIMEOUT_MS);
    hard.unref();
    stack.stop().then(
      () => {
        // The benchmark is gone and cannot remove its temp dir (data, catalogue) any more: do it for it.
        const tmp = process.env.BENCH_TEMP_DIR;
        if (orphaned && tmp && path.basename(tmp).startsWith('gw-bench-')) rmSync(tmp, { recursive: true, force: true });
        process.exit(code);
      },
      (err: unknown) => {
        process.stderr.write(`gateway stop failed: ${(err as Error)?.stack ?? err}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
  // The benchmark died without cleaning up: do not linger as an orphan holding ports.
  process.once('disconnect', () => stop(0, true));

  const edgePort = stack.edge.httpPort;
  process.stdout.write(`gateway ready on http://127.0.0.1:${edgePort} (pid ${process.pid})\n`);
  process.send?.({ ready: true, edgePort, pid: process.pid });
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway failed to start: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
