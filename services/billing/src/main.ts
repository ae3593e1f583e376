import { blobConfigFor, createBlobStore } from '@gw/blobs';
import { engineConfig } from '@gw/platform';
import { openEngines, runService } from '@gw/runtime';
import { startBillingService } from './app';
import { loadBillingConfig } from './config';

/** Billing as its own process: engines and blobs from the environment, graceful stop on SIGTERM/SIGINT. */
const config = loadBillingConfig();
const engines = engineConfig(config, 'billing');
void runService('billing', config.LOG_LEVEL, async (logger) => {
  const opened = await openEngines(engines, 'billing', logger);
  // Archived call bodies: files under the data dir, or GridFS on MONGO_URL.
  const blobs = createBlobStore(blobConfigFor(engines.store));
  return { ...opened, blobs, close: async () => { await opened.close(); await blobs.close(); } };
}, ({ store, bus, blobs }, logger) => startBillingService({ config, store, bus, blobs, logger }));
