import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Logger } from '@gw/platform';
import { createStore, type Store } from '@gw/store';
import { createBus } from '../create-bus';
import type { Bus } from '../port';

export type EngineName = 'embedded' | 'kafka';

/** Short enough that a crashed member's work moves on within a test, long enough for a loaded CI box. */
export const EMBEDDED_LEASE_MS = 1_500;
/** The broker's minimum (group.min.session.timeout.ms): a killed member leaves the group after this. */
export const KAFKA_SESSION_TIMEOUT_MS = 6_000;

/** What another process needs to reach the same bus. */
export type BusEndpoint = { engine: 'embedded'; dataDir: string } | { engine: 'kafka'; brokers: string[] };

export function testLogger(): Logger {
  return createLogger('bus-test', process.env.TEST_LOG_LEVEL ?? 'silent');
}

export function kafkaBrokers(): string[] {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) {
    throw new Error(
      'KAFKA_BROKERS is not set: the Kafka bus tests need a real broker. The jest globalSetup ' +
        '(scripts/jest/engines-setup.js) starts one; by hand: `bash scripts/engines.sh start && source .cache/engines/env`.',
    );
  }
  return brokers.split(',').map((b) => b.trim()).filter(Boolean);
}

export async function openStore(dataDir: string): Promise<Store> {
  return createStore({ engine: 'embedded', dataDir });
}

export function busOn(endpoint: BusEndpoint, store: Store | null, logger: Logger, sessionTimeoutMs = KAFKA_SESSION_TIMEOUT_MS): Bus {
  if (endpoint.engine === 'kafka') {
    return createBus({ engine: 'kafka', brokers: endpoint.brokers, clientId: 'bus-test', sessionTimeoutMs }, logger);
  }
  if (!store) throw new Error('the embedded bus needs a store');
  return createBus({ engine: 'embedded', store, leaseMs: EMBEDDED_LEASE_MS, pollMs: 250 }, logger);
}

/**
 * One test's view of an engine: any number of buses on one backing (embedded buses share one store, as
 * services in one process do), and a way to hand the backing over to another process.
 */
export class EngineHarness {
  private store: Store | null = null;
  private buses: Bus[] = [];

  private constructor(readonly endpoint: BusEndpoint, readonly logger: Logger) {}

  static async create(engine: EngineName): Promise<EngineHarness> {
    const logger = testLogger();
    if (engine === 'kafka') return new EngineHarness({ engine, brokers: kafkaBrokers() }, logger);
    return new EngineHarness({ engine, dataDir: await mkdtemp(join(tmpdir(), 'gw-bus-')) }, logger);
  }

  /** The embedded engine's store (opened on first use, reopened after `release`). */
  async openedStore(): Promise<Store> {
    if (this.endpoint.engine !== 'embedded') throw new Error('only the embedded engine has a store');
    this.store ??= await openStore(this.endpoint.dataDir);
    return this.store;
  }

  async bus(): Promise<Bus> {
    const store = this.endpoint.engine === 'embedded' ? await this.openedStore() : null;
    const bus = busOn(this.endpoint, store, this.logger);
    this.buses.push(bus);
    return bus;
  }

  /** Closes every bus and the store, so another process can open the same data. */
  async release(): Promise<void> {
    await Promise.all(this.buses.splice(0).map((b) => b.close()));
    await this.store?.close();
    this.store = null;
  }

  async dispose(): Promise<void> {
    await this.release();
    if (this.endpoint.engine === 'embedded') await rm(this.endpoint.dataDir, { recursive: true, force: true });
  }
}

/** Polls `check` until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let counter = 0;
/** Topic and group names unique per test run (valid on both engines). */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
}
