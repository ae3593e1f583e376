import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createLogger, type Logger } from '@gw/platform';
import type { Collection, Doc, NativeAppendLogs, Store } from '../port';
import { EmbeddedCollection, INDEX_PATHS_TABLE } from './embedded-collection';
import { EmbeddedLogs } from './embedded-logs';
import { migrateNedbDatafiles } from './nedb-migration';
import { ScanReport } from './scan-report';
import { SqliteDatabase, type Synchronous } from './sqlite-database';
import type { WalCheckpointer } from './wal-checkpointer';

export interface EmbeddedStoreConfig {
  /** Folder holding the store's database (`store.sqlite`, with its `-wal` and `-shm` files); created when missing. */
  dataDir: string;
  /** SQLite `synchronous` in WAL mode: `normal` (default; survives a process crash) or `full` (also a power loss). */
  synchronous?: Synchronous;
  /** The owning service's logger; the store's lines add only `component`. */
  logger?: Logger;
  /**
   * Runs this store's WAL checkpoints off the event loop; one serves every store of a process. Without one,
   * SQLite checkpoints inside the commit that crosses its threshold, on the event loop.
   */
  checkpointer?: WalCheckpointer;
  /** Appends every filtered read that scans a whole collection to this file (see ScanReport); off when unset. */
  scanReportFile?: string;
}

export const DATABASE_FILE = 'store.sqlite';

const COLLECTION_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * The embedded engine: one SQLite database per data dir (Node's built-in `node:sqlite`, WAL mode), one table
 * per collection and one per append log (see embedded-logs). Documents stay on disk; memory holds SQLite's
 * page cache and prepared statements only, and opening reads no history. Datafiles of the previous (NeDB)
 * engine are migrated on open.
 */
class EmbeddedStore implements Store {
  readonly engine = 'embedded';
  private readonly db: SqliteDatabase;
  readonly logs: NativeAppendLogs;
  private readonly collections = new Map<string, EmbeddedCollection<Doc>>();
  private closed = false;

  constructor(cfg: EmbeddedStoreConfig) {
    const dataDir = resolve(cfg.dataDir);
    const log = (cfg.logger ?? createLogger(null)).child({ component: 'store-embedded' });
    mkdirSync(dataDir, { recursive: true });
    const scanReport = cfg.scanReportFile ? new ScanReport(resolve(cfg.scanReportFile), log) : undefined;
    this.db = new SqliteDatabase(join(dataDir, DATABASE_FILE), cfg.synchronous, log, cfg.checkpointer, scanReport);
    try {
      this.db.exec(
        `CREATE TABLE IF NOT EXISTS ${INDEX_PATHS_TABLE} (collection TEXT NOT NULL, path TEXT NOT NULL, array_seen INTEGER NOT NULL, PRIMARY KEY (collection, path))`,
      );
      migrateNedbDatafiles(this.db, dataDir, log);
      this.logs = new EmbeddedLogs(this.db);
    } catch (err) {
      void this.db.close();
      throw err;
    }
  }

  collection<T extends Doc>(name: string): Collection<T> {
    return this.embeddedCollection<T>(name);
  }

  private embeddedCollection<T extends Doc>(name: string): EmbeddedCollection<T> {
    if (this.closed) throw new Error('Embedded store is closed');
    if (!COLLECTION_NAME.test(name)) throw new Error(`Invalid collection name '${name}'`);
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection<Doc>(name, this.db);
      this.collections.set(name, collection);
    }
    return collection as unknown as EmbeddedCollection<T>;
  }

  async ping(): Promise<boolean> {
    if (this.closed || !this.db.isOpen) return false;
    try {
      this.db.statement('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.db.close();
  }
}

export function createEmbeddedStore(cfg: EmbeddedStoreConfig): Store {
  return new EmbeddedStore(cfg);
}
