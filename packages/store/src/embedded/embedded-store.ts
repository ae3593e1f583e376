import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createLogger, type Logger } from '@gw/platform';
import type { Collection, Doc, Store } from '../port';
import { Datafile } from './datafile';
import { EmbeddedCollection } from './embedded-collection';

export interface EmbeddedStoreConfig {
  /** Folder holding one datafile per collection (`<name>.db`); created when missing. */
  dataDir: string;
  /** How often each loaded datafile is compacted (NeDB appends every change); default 10 minutes. */
  compactionIntervalMs?: number;
  /** The owning service's logger; the store's lines add only `component`. */
  logger?: Logger;
}

const COLLECTION_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * The embedded engine: NeDB datafiles on local disk, for a single process. Each collection is loaded on
 * first use and kept in memory.
 */
class EmbeddedStore implements Store {
  readonly engine = 'embedded';
  private readonly dataDir: string;
  private readonly compactionIntervalMs: number;
  private readonly log: Logger;
  private readonly collections = new Map<string, { file: Datafile; collection: EmbeddedCollection<Doc> }>();
  private closed = false;

  constructor(cfg: EmbeddedStoreConfig) {
    this.dataDir = resolve(cfg.dataDir);
    this.log = (cfg.logger ?? createLogger(null)).child({ component: 'store-embedded' });
    this.compactionIntervalMs = Math.max(cfg.compactionIntervalMs ?? 10 * 60_000, 5_000);
  }

  collection<T extends Doc>(name: string): Collection<T> {
    if (this.closed) throw new Error('Embedded store is closed');
    if (!COLLECTION_NAME.test(name)) throw new Error(`Invalid collection name '${name}'`);
    let entry = this.collections.get(name);
    if (!entry) {
      const file = new Datafile(join(this.dataDir, `${name}.db`), this.compactionIntervalMs, this.log);
      entry = { file, collection: new EmbeddedCollection<Doc>(name, file) };
      this.collections.set(name, entry);
    }
    return entry.collection as unknown as Collection<T>;
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      await mkdir(this.dataDir, { recursive: true });
      await access(this.dataDir, constants.R_OK | constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.collections.values()].map(({ file }) => file.close()));
  }
}

export function createEmbeddedStore(cfg: EmbeddedStoreConfig): Store {
  return new EmbeddedStore(cfg);
}
