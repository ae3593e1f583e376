/**
 * Billing in its own thread of the single-process gateway: its consumers (usage, archive, failed calls) and
 * its API run on the machine's other core instead of between the hot path's requests. It opens its own
 * connections to its store and to the shared bus files (SQLite in WAL mode: the writers take turns, the
 * readers do not wait), so nothing but the files and the wake-up channel is shared with the main thread.
 */
import { workerData } from 'node:worker_threads';
import * as path from 'node:path';
import { loadBillingConfig, startBillingService } from '@gw/billing';
import { blobConfigFor, createBlobStore } from '@gw/blobs';
import { createBus } from '@gw/bus';
import { createStore, WalCheckpointer } from '@gw/store';
import { createLogger, startTracing } from '@gw/platform';
import { serveFromWorker } from './worker-service';

export interface BillingWorkerData {
  dataDir: string;
  env: NodeJS.ProcessEnv;
  logLevel: string;
  /** The bus files' wake-up channel, the same as the main thread's. */
  busWakeChannel: string;
}

serveFromWorker(async () => {
  const { dataDir, env, logLevel, busWakeChannel } = workerData as BillingWorkerData;
  // Every line this thread logs says so: a slow write or a wait for the bus files' lock is then placed.
  const logger = createLogger(null, logLevel).child({ thread: 'billing-worker' });
  // A thread has its own tracer provider: billing's spans go where the main thread's go.
  const tracing = startTracing('gateway', env);
  // Billing's file is the largest: its checkpoints run on a thread of their own, not between billing's holds.
  // The bus file is the main thread's checkpointer's.
  const checkpointer = new WalCheckpointer({ logger: logger.child({ component: 'wal-checkpointer' }) });
  const scanReportFile = env.STORE_SCAN_REPORT_FILE || undefined;
  const store = createStore({ engine: 'embedded', dataDir: path.join(dataDir, 'billing'), checkpointer, scanReportFile }, logger.child({ service: 'billing', component: 'store' }));
  const busStore = createStore({ engine: 'embedded', dataDir: path.join(dataDir, 'bus'), scanReportFile }, logger.child({ service: 'bus', component: 'store' }));
  // The main thread's bus trims every topic of the bus files, billing's included: one trimmer per file.
  const bus = createBus({ engine: 'embedded', store: busStore, wakeChannel: busWakeChannel, trimIntervalMs: 0 }, logger.child({ service: 'bus' }));
  // Archived calls' bodies live under the data dir, next to billing's store.
  const blobs = createBlobStore(blobConfigFor({ engine: 'embedded', dataDir: path.join(dataDir, 'billing') }));
  const close = async () => {
    await bus.close();
    await blobs.close();
    await busStore.close();
    await store.close();
    await checkpointer.close();
    await tracing?.shutdown();
  };
  try {
    const service = await startBillingService({ config: loadBillingConfig(env), store, bus, blobs, logger: logger.child({ service: 'billing' }) });
    return { service, close };
  } catch (err) {
    await close();
    throw err;
  }
});
