import { createEmbeddedStore } from './embedded';
import type { Logger } from '@gw/platform';
import type { Store } from './port';
import type { WalCheckpointer } from './embedded';

export type StoreConfig = { engine: 'embedded'; dataDir: string; checkpointer?: WalCheckpointer; scanReportFile?: string } | { engine: 'mongo'; url: string; opTimeoutMs?: number };

/** The store the configuration names; repository code sees only the `Store` port. */
export function createStore(cfg: StoreConfig, logger?: Logger): Store {
  switch (cfg.engine) {
    case 'embedded':
      return createEmbeddedStore({ dataDir: cfg.dataDir, logger, checkpointer: cfg.checkpointer, scanReportFile: cfg.scanReportFile });
    case 'mongo': {
      // Loaded only when chosen: the MongoDB driver takes a quarter of a second to load, which a process on the
      // embedded engine should not pay at every start.
      const { createMongoStore } = require('./mongo') as typeof import('./mongo');
      return createMongoStore({ url: cfg.url, opTimeoutMs: cfg.opTimeoutMs, logger });
    }
    default:
      throw new Error(`Unknown store engine '${(cfg as { engine?: unknown }).engine}'`);
  }
}
