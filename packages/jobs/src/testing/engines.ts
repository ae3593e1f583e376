import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { createLogger, type Logger } from '@gw/platform';
import { createStore, type Store, type StoreConfig } from '@gw/store';

/** Test-only: the store engines the jobs contract runs on, and a way to reach one from another process. */

export type EngineName = 'embedded' | 'mongo';

export function testLogger(): Logger {
  return createLogger('jobs-test', process.env.TEST_LOG_LEVEL ?? 'silent');
}

/** The same server URL with another database name. */
function withDatabase(url: string, db: string): string {
  const m = /^(mongodb(?:\+srv)?:\/\/[^/?]+)(?:\/[^?]*)?(\?.*)?$/.exec(url);
  if (!m) throw new Error(`MONGO_URL is not a mongodb:// URL: ${url}`);
  return `${m[1]}/${db}${m[2] ?? ''}`;
}

/**
 * One test's store location. The embedded engine's data belongs to one process at a time, so every
 * `connect()` there shares one store; on the MongoDB-wire server each `connect()` is its own connection,
 * as separate instances have.
 */
export class StoreLocation {
  private shared: Store | null = null;
  private readonly opened: Store[] = [];

  private constructor(readonly config: StoreConfig) {}

  static async create(engine: EngineName): Promise<StoreLocation> {
    if (engine === 'embedded') return new StoreLocation({ engine, dataDir: await mkdtemp(join(tmpdir(), 'gw-jobs-')) });
    const base = process.env.MONGO_URL;
    if (!base) {
      throw new Error(
        'MONGO_URL is not set, so the mongo engine has no server to test against. Run the unit project (its ' +
          'globalSetup starts one), or `source .cache/engines/env` first.',
      );
    }
    return new StoreLocation({ engine: 'mongo', url: withDatabase(base, `jobs_contract_${randomUUID().replace(/-/g, '')}`) });
  }

  connect(): Store {
    if (this.config.engine === 'embedded') {
      this.shared ??= createStore(this.config);
      return this.shared;
    }
    const store = createStore(this.config);
    this.opened.push(store);
    return store;
  }

  /** Closes every store opened here, so another process can open the same data. */
  async release(): Promise<void> {
    const stores = [...this.opened.splice(0), ...(this.shared ? [this.shared] : [])];
    this.shared = null;
    await Promise.all(stores.map((s) => s.close()));
  }

  async destroy(): Promise<void> {
    await this.release();
    if (this.config.engine === 'embedded') {
      await rm(this.config.dataDir, { recursive: true, force: true });
      return;
    }
    const conn = await mongoose.createConnection(this.config.url).asPromise();
    try {
      await conn.dropDatabase();
    } finally {
      await conn.close();
    }
  }
}

/** Polls `check` until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
