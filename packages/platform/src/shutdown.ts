import type { Logger } from './logger';

export type ShutdownStep = { name: string; run: () => Promise<void> };

/**
 * Graceful shutdown on SIGTERM/SIGINT: runs the steps in order (typically: report not ready, stop
 * listening and finish in-flight requests, stop consumers and release leases, flush publishers, close
 * engines), each bounded, then exits.
 */
export function installShutdown(logger: Logger, steps: ShutdownStep[], timeoutMs = 20_000): () => Promise<void> {
  let running: Promise<void> | null = null;
  const shutdown = () => {
    running ??= (async () => {
      logger.info('shutting down');
      const hardStop = setTimeout(() => { logger.error('shutdown timed out'); process.exit(1); }, timeoutMs);
      hardStop.unref();
      for (const step of steps) {
        try {
          await step.run();
        } catch (err) {
          logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
      clearTimeout(hardStop);
      logger.info('stopped');
    })();
    return running;
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => { shutdown().then(() => process.exit(0)); });
  }
  return shutdown;
}
