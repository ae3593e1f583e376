import mongoose, { type mongo } from 'mongoose';
import { createLogger } from '@gw/platform';
import type { Collection, Doc, Store } from '../port';
import { MongoCollection } from './mongo-collection';

export interface MongoStoreConfig {
  /** Connection string; the database is the one it names. */
  url: string;
  /** How long `ping()` waits for an answer; default 2 s. */
  pingTimeoutMs?: number;
}

/** Settles with `fallback` after `ms` if `promise` has not settled; the late outcome is ignored. */
function withTimeout<V>(promise: Promise<V>, ms: number, fallback: V): Promise<V> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<V>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The MongoDB engine: a mongoose connection, used only for its native driver database (no models, no
 * schemas). Needs no transactions, so a Mongo-wire test server serves as well as MongoDB.
 */
class MongoStore implements Store {
  readonly engine = 'mongo';
  private readonly log = createLogger('store-mongo');
  private readonly connection: mongoose.Connection;
  private readonly opened: Promise<mongo.Db>;
  private readonly pingTimeoutMs: number;

  constructor(cfg: MongoStoreConfig) {
    this.pingTimeoutMs = cfg.pingTimeoutMs ?? 2_000;
    // The driver default, pinned: an `undefined` value is stored (and matched) as null, as on the embedded engine.
    this.connection = mongoose.createConnection(cfg.url, { ignoreUndefined: false, autoIndex: false, autoCreate: false });
    // Without a listener, a connection 'error' event would be thrown as an uncaught exception.
    this.connection.on('error', (err: unknown) => this.log.error({ err }, 'mongo connection error'));
    this.opened = this.connection.asPromise().then((conn) => {
      if (!conn.db) throw new Error('MongoDB connection opened without a database');
      return conn.db;
    });
    // Failures reach callers through each operation; this only keeps a failed connect from going unhandled.
    this.opened.catch(() => undefined);
  }

  collection<T extends Doc>(name: string): Collection<T> {
    return new MongoCollection<T>(name, () => this.opened);
  }

  async ping(): Promise<boolean> {
    const answer = this.opened
      .then((db) => db.admin().command({ ping: 1 }))
      .then((r) => r.ok === 1, () => false);
    return withTimeout(answer, this.pingTimeoutMs, false);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

export function createMongoStore(cfg: MongoStoreConfig): Store {
  return new MongoStore(cfg);
}
