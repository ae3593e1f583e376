import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { createLogger, IdentitySigner, startGrpcServer, type Logger } from '@gw/platform';
import { createBus, type Bus, type BusMessage, type Subscription } from '@gw/bus';
import { billingProto, TOPICS, type BillingServiceHandlers, type KeyChanged } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import type { KeyUsageMicros } from './key-usage';

/** Test helpers: real engines in a temp dir, and a stand-in for billing's gRPC contract over the real wire. */

/** The platform identity secret of the keys service under test. */
export const KEYS_TEST_SECRET = 'keys-test-identity-secret-0123456789abcdef';

/** Signs the identities a test sends as the edge (HTTP) or as a service (gRPC). */
export function testSigner(issuer = 'edge'): IdentitySigner {
  return new IdentitySigner(KEYS_TEST_SECRET, issuer);
}

export function testLogger(): Logger {
  return createLogger('keys-test', process.env.TEST_LOG_LEVEL ?? 'silent');
}

export async function tempDir(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'gw-keys-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export interface TestEngines {
  store: Store;
  bus: Bus;
  close(): Promise<void>;
}

/** The embedded store in `dataDir` and the embedded bus on it, as a standalone keys process has them. */
export async function openEngines(dataDir: string, logger: Logger): Promise<TestEngines> {
  const store = await createStore({ engine: 'embedded', dataDir });
  const bus = createBus({ engine: 'embedded', store, pollMs: 50 }, logger);
  return {
    store,
    bus,
    async close() {
      await bus.close();
      await store.close();
    },
  };
}

export interface BillingStub {
  address: string;
  /** Usage billing reports, by key hash; keys not in here are reported as absent. */
  usage: Map<string, KeyUsageMicros>;
  stop(): Promise<void>;
}

/** A tiny BillingService answering `GetKeyUsage` from a map (billing itself is another team's service). */
export async function startBillingStub(): Promise<BillingStub> {
  const usage = new Map<string, KeyUsageMicros>();
  const unimplemented = (_call: unknown, cb: grpc.sendUnaryData<never>) => cb({ code: grpc.status.UNIMPLEMENTED, details: 'stub' }, null);
  const handlers: BillingServiceHandlers = {
    GetKeyUsage: (call, cb) => {
      const found = call.request.key_hashes.filter((h) => usage.has(h)).map((h) => {
        const u = usage.get(h)!;
        return { key_hash: h, total_micros: u.total, daily_micros: u.daily, weekly_micros: u.weekly, monthly_micros: u.monthly };
      });
      cb(null, { usage: found });
    },
    GetBalance: unimplemented,
    Preauthorize: unimplemented,
    Reserve: unimplemented,
    Release: unimplemented,
    GetRequestCharges: unimplemented,
  };
  const handle = await startGrpcServer('127.0.0.1:0', (server) => server.addService(billingProto.gateway.billing.v1.BillingService.service, handlers));
  return { address: `127.0.0.1:${handle.port}`, usage, stop: () => handle.shutdown(1000) };
}

/** An address nothing listens on, for "billing is down". */
export async function deadAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

/** Collects every KeyChanged the bus delivers from the start of the topic. */
export async function watchKeyChanges(bus: Bus): Promise<{ seen: KeyChanged[]; keys: string[]; waitFor(n: number): Promise<KeyChanged[]>; stop(): Promise<void> }> {
  const seen: KeyChanged[] = [];
  const keys: string[] = [];
  const sub: Subscription = await bus.subscribe<KeyChanged>({
    topics: [TOPICS.keys],
    group: `keys-test-${Math.random().toString(36).slice(2)}`,
    from: 'earliest',
    handleBatch: async (messages: BusMessage<KeyChanged>[]) => {
      for (const m of messages) {
        keys.push(m.key);
        seen.push(m.value);
      }
    },
  });
  return {
    seen,
    keys,
    async waitFor(n) {
      const deadline = Date.now() + 5000;
      while (seen.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return seen;
    },
    stop: () => sub.stop(),
  };
}

/** A settable clock. */
export function testClock(start = new Date('2030-01-01T00:00:00Z')): { now: () => Date; advance(ms: number): void } {
  let t = start.getTime();
  return { now: () => new Date(t), advance: (ms) => { t += ms; } };
}
