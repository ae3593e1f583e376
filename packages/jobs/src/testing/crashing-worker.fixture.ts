/**
 * Child process for the crash test: runs one worker of `kind`, reports the job it claimed to the parent
 * over IPC, and then hangs inside the handler (renewing the lease) until the parent SIGKILLs it.
 * argv[2]: JSON { config: StoreConfig, kind, leaseMs }.
 */
import { createStore, type StoreConfig } from '@gw/store';
import { JobStore } from '../job-store';
import { JobWorkerPool } from '../worker-pool';
import { testLogger } from './engines';

function main(): void {
  const { config, kind, leaseMs } = JSON.parse(process.argv[2]) as { config: StoreConfig; kind: string; leaseMs: number };
  const jobs = new JobStore<unknown, unknown>({ store: createStore(config), kind });
  const pool = new JobWorkerPool<unknown, unknown>({
    jobs, logger: testLogger(), workers: 1, leaseMs, pollMs: 20, cancelCheckMs: 60_000, shutdownGraceMs: 0,
    handler: async ({ job, workerId }) => {
      process.send?.({ type: 'claimed', jobId: job._id, workerId });
      return new Promise(() => undefined);
    },
  });
  pool.start();
}

main();
