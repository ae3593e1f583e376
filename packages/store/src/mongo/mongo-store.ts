import mongoose, { type mongo } from 'mongoose';
import { createLogger, type Logger } from '@gw/platform';
import type { Collection, Doc, Store } from '../port';
import { MongoCollection } from './mongo-collection';
import { AnswerBound } from './answer-bound';

export interface MongoStoreConfig {
  /** Connection string; the database is the one it names. */
  url: string;
  /** How long `ping()` waits for an answer; default 2 s. */
  pingTimeoutMs?: number;
  /**
   * How long an operation waits on a silent server before it checks the server is alive (default 2 s): a hung
   * server fails it as unavailable in about twice this, inside the 5 s of an internal call.
   */
  opTimeoutMs?: number;
  /** The owning service's logger; the store's lines add only `component`. */
  logger?: Logger;
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
  private readonly log: Logger;
  private readonly connection = mongoose.createConnection();
  private readonly url: string;
  private readonly pingTimeoutMs: number;
  private readonly bound: AnswerBound;
  private opening: Promise<mongo.Db> | undefined;
  private closed = false;

  constructor(cfg: MongoStoreConfig) {
    this.url = cfg.url;
    this.log = (cfg.logger ?? createLogger(null)).child({ component: 'store-mongo' });
    this.pingTimeoutMs = cfg.pingTimeoutMs ?? 2_000;
    this.bound = new AnswerBound(cfg.opTimeoutMs ?? 2_000, () => this.database().then((db) => db.admin().command({ ping: 1 })));
    // Without a listener, a connection 'error' event would be thrown as an uncaught exception.
    this.connection.on('error', (err: unknown) => {
      if (!this.closed) this.log.error({ err }, 'mongo connection error');
    });
    // Connect now so the first request does not wait for it; failures reach callers through each operation.
    this.database().catch(() => undefined);
  }

  /**
   * The connected database. A failed first connection is retried by the next call: mongoose gives up on an
   * initial connection failure, and the server may simply not be up yet.
   */
  private database(): Promise<mongo.Db> {
    if (this.closed) return Promise.reject(new Error('Mongo store is closed'));
    if (!this.opening) {
      const opening = this.connection
        // ignoreUndefined pinned to the driver default: `undefined` is stored and matched as null, as on the
        // embedded engine. No models here, so nothing for mongoose to create or index. Pooled connections idle
        // for a minute are closed (the driver's default keeps every one a slow spell opened: the steady soak saw
        // inference hold 86 of its 100); a `maxIdleTimeMS` in the URL still wins.
        .openUri(this.url, { ignoreUndefined: false, autoIndex: false, autoCreate: false, maxIdleTimeMS: maxIdleTimeMs(this.url) })
        .then((conn) => {
          if (!conn.db) throw new Error('MongoDB connection opened without a database');
          return conn.db;
        });
      opening.catch(() => {
        if (this.opening === opening) this.opening = undefined;
      });
      this.opening = opening;
    }
    return this.opening;
  }

  collection<T extends Doc>(name: string): Collection<T> {
    if (this.closed) throw new Error('Mongo store is closed');
    return new MongoCollection<T>(name, () => this.database(), this.bound);
  }

  async ping(): Promise<boolean> {
    const answer = this.database()
      .then((db) => db.admin().command({ ping: 1 }))
      .then((r) => r.ok === 1, () => false);
    return withTimeout(answer, this.pingTimeoutMs, false);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.connection.readyState === mongoose.ConnectionStates.connecting) {
      // mongoose's close() waits for a pending connect, up to the server selection timeout (30 s);
      // closing the driver's client ends that connect attempt now.
      await this.connection.getClient()?.close().catch(() => undefined);
    }
    await this.connection.close();
  }
}

/** Pooled connections idle this long are closed, unless the connection string sets its own. */
export const MONGO_MAX_IDLE_MS = 60_000;

function maxIdleTimeMs(url: string): number {
  const given = /[?&]maxIdleTimeMS=(\d+)/i.exec(url);
  return given ? Number(given[1]) : MONGO_MAX_IDLE_MS;
}

export function createMongoStore(cfg: MongoStoreConfig): Store {
  return new MongoStore(cfg);
}
