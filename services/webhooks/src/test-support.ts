import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { createBus, type Bus } from '@gw/bus';
import { createLogger, IdentitySigner, type Identity, type Logger, type RunningService } from '@gw/platform';
import { TOPICS, type CallbackRequested } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { startTlsReceiver, type TlsReceiver } from '@gw/net-guard/src/testing/tls-receiver';
import { startWebhooksService, type WebhooksServiceOptions } from './app';

/** Test helpers: real engines, a real HTTPS receiver, and the service started as production starts it. */

export const WEBHOOKS_TEST_SECRET = 'webhooks-test-identity-secret-0123456789abcdef';

export function testLogger(): Logger {
  return createLogger('webhooks-test', process.env.TEST_LOG_LEVEL ?? 'silent');
}

export interface TestEngines {
  store: Store;
  bus: Bus;
  close(): Promise<void>;
}

/**
 * Engines for one test. `embedded`: one store in a temp dir with the embedded bus on it. `mongo`: a fresh
 * database on the MongoDB-wire server; `connect()` gives each instance its own connection (with the embedded
 * bus on it, so the bus is shared through the database as separate processes share it).
 */
export class TestLocation {
  private readonly opened: TestEngines[] = [];

  private constructor(private readonly engine: 'embedded' | 'mongo', private readonly where: string) {}

  static async create(engine: 'embedded' | 'mongo'): Promise<TestLocation> {
    if (engine === 'embedded') return new TestLocation(engine, await mkdtemp(join(tmpdir(), 'gw-webhooks-')));
    const base = process.env.MONGO_URL;
    if (!base) throw new Error('MONGO_URL is not set: run through jest (its globalSetup provides the engines)');
    const url = new URL(base);
    url.pathname = `/webhooks_test_${randomUUID().replace(/-/g, '')}`;
    return new TestLocation(engine, url.toString());
  }

  connect(logger: Logger): TestEngines {
    if (this.engine === 'embedded' && this.opened.length > 0) return this.opened[0];
    const store = this.engine === 'embedded' ? createStore({ engine: 'embedded', dataDir: this.where }) : createStore({ engine: 'mongo', url: this.where });
    const bus = createBus({ engine: 'embedded', store, pollMs: 50 }, logger);
    const engines = { store, bus, close: async () => { await bus.close(); await store.close(); } };
    this.opened.push(engines);
    return engines;
  }

  async destroy(): Promise<void> {
    for (const e of this.opened.splice(0)) await e.close();
    if (this.engine === 'embedded') {
      await rm(this.where, { recursive: true, force: true });
      return;
    }
    const conn = await mongoose.createConnection(this.where).asPromise();
    try {
      await conn.dropDatabase();
    } finally {
      await conn.close();
    }
  }
}

/** An HTTPS receiver on loopback, and its certificate in a file the service is told to trust. */
export async function startTrustedReceiver(): Promise<{ receiver: TlsReceiver; caFile: string; remove(): Promise<void> }> {
  const receiver = await startTlsReceiver();
  const dir = await mkdtemp(join(tmpdir(), 'gw-webhooks-ca-'));
  const caFile = join(dir, 'receiver-ca.pem');
  await writeFile(caFile, receiver.cert);
  return { receiver, caFile, remove: async () => { await receiver.close(); await rm(dir, { recursive: true, force: true }); } };
}

export function startTestService(engines: TestEngines, caFile: string, logger: Logger, extra: Partial<WebhooksServiceOptions['config']> = {}): Promise<RunningService> {
  return startWebhooksService({
    config: {
      WEBHOOKS_HTTP_PORT: 0, GATEWAY_IDENTITY_SECRET: WEBHOOKS_TEST_SECRET, BIND_HOST: '127.0.0.1',
      // Test-only: the receiver runs on this machine.
      GATEWAY_ALLOW_LOOPBACK_CALLBACKS: true, WEBHOOKS_EXTRA_CA_FILE: caFile,
      WEBHOOKS_WORKERS: 2, WEBHOOKS_LEASE_MS: 3_000, WEBHOOKS_POLL_MS: 50,
      ...extra,
    },
    store: engines.store, bus: engines.bus, logger,
  });
}

export function identityOf(accountId: string, isManagement = true): Identity {
  return { accountId, keyHash: `hash-${accountId}`, isManagement, keyLimitMicros: null, keyLimitReset: null };
}

/** A request to the service's own port as the edge forwards it: with an identity token bound to it. */
export async function callService(port: number, method: string, path: string, identity: Identity, body?: unknown): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const token = new IdentitySigner(WEBHOOKS_TEST_SECRET, 'edge').mint({ method, path }, identity, `trace-${randomUUID()}`);
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'x-gw-identity': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body: parsed };
}

export function callbackEvent(overrides: Partial<CallbackRequested> & { account_id: string }): CallbackRequested {
  const eventId = overrides.event_id ?? `batch_${randomUUID()}:batch.completed`;
  return {
    event_id: eventId, kind: 'batch', event: 'batch.completed', url: '', signed: true, created_at_ms: Date.now(), traceparent: '',
    body_json: JSON.stringify({ id: eventId.split(':')[0], object: 'batch', status: 'completed', event: 'batch.completed' }),
    ...overrides,
  };
}

export async function publishCallback(bus: Bus, event: CallbackRequested): Promise<void> {
  await bus.publish(TOPICS.callbacks, [{ key: event.event_id, value: event }]);
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
