import { blobConfigFor, createBlobStore } from '@gw/blobs';
import { engineConfig } from '@gw/platform';
import { openEngines, runService } from '@gw/runtime';
import { startMediaService } from './app';
import { loadMediaConfig } from './config';

/** Media as its own process: store, bus and blobs from the environment (files under the data dir, or GridFS on MONGO_URL). */
const config = loadMediaConfig();
const engines = engineConfig(config, 'media');
void runService('media', config.LOG_LEVEL, async (logger) => {
  const opened = await openEngines(engines, 'media', logger);
  const blobs = createBlobStore(blobConfigFor(engines.store));
  return { ...opened, blobs, close: async () => { await opened.close(); await blobs.close(); } };
}, ({ store, bus, blobs }, logger) => startMediaService({ config, store, bus, blobs, logger }));
