import { blobConfigFor, createBlobStore } from '@gw/blobs';
import { engineConfig } from '@gw/platform';
import { openEngines, runService } from '@gw/runtime';
import { startBatchService } from './app';
import { loadBatchConfig } from './config';

/** Batch as its own process: store, bus and blobs from the environment (files under the data dir, or GridFS on MONGO_URL). */
const config = loadBatchConfig();
const engines = engineConfig(config, 'batch');
void runService('batch', config.LOG_LEVEL, async (logger) => {
  const opened = await openEngines(engines, 'batch', logger);
  const blobs = createBlobStore(blobConfigFor(engines.store));
  return { ...opened, blobs, close: async () => { await opened.close(); await blobs.close(); } };
}, ({ store, bus, blobs }, logger) => startBatchService({ config, store, bus, blobs, logger }));
