import { createEmbeddedStore } from './embedded';
import { createMongoStore } from './mongo';
import type { Store } from './port';

export type StoreConfig = { engine: 'embedded'; dataDir: string } | { engine: 'mongo'; url: string };

/** The store the configuration names; repository code sees only the `Store` port. */
export function createStore(cfg: StoreConfig): Store {
  switch (cfg.engine) {
    case 'embedded':
      return createEmbeddedStore({ dataDir: cfg.dataDir });
    case 'mongo':
      return createMongoStore({ url: cfg.url });
    default:
      throw new Error(`Unknown store engine '${(cfg as { engine?: unknown }).engine}'`);
  }
}
