import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, type Logger, type RunningService } from '@gw/platform';
import { createBus, type Bus, type BusMessage } from '@gw/bus';
import { createStore, type Collection, type Store } from '@gw/store';
import { createBlobStore, type BlobStore } from '@gw/blobs';
import { PriceBook, readCatalog } from '@gw/catalog';
import { TOPICS, type UsageEvent } from '@gw/proto';
import { startBillingService } from './app';
import { billingConfigSchema, type BillingConfig } from './config';

/**
 * Test-only support: real embedded store and bus in a temp dir, a small catalogue with round prices, and
 * event builders. Not a test file itself; nothing in production imports it.
 */
export const TEST_CATALOG = {
  providers: { sim: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' } },
  models: [{
    id: 'test/chat', name: 'Test chat', owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    deployments: [
      // 1 USD per million prompt tokens, 2 USD per million completion tokens: 1 and 2 micros per token.
      { id: 'dep-chat', provider: 'sim', provider_model: 'chat', price: { prompt_per_million: '1', completion_per_million: '2' } },
      { id: 'dep-fee', provider: 'sim', provider_model: 'chat-fee', price: { prompt_per_million: '1', completion_per_million: '2', per_request: '0.01' } },
      // Lines run through the provider's batch API cost half: 0.5 and 1 micro per token.
      {
        id: 'dep-batch', provider: 'sim', provider_model: 'chat-batch', native_batch: true,
        price: { prompt_per_million: '1', completion_per_million: '2' }, batch_price: { prompt_per_million: '0.5', completion_per_million: '1' },
      },
    ],
  }],
};

export const silentLogger = (): Logger => createLogger('billing-test', process.env.TEST_LOG_LEVEL ?? 'silent');

export type StoreEngine = 'embedded' | 'mongo';

/** The store engines this run can test: the embedded one always, MongoDB (wire) when `MONGO_URL` is set. */
export const STORE_ENGINES: StoreEngine[] = process.env.MONGO_URL ? ['embedded', 'mongo'] : ['embedded'];

const BILLING_COLLECTIONS = ['accounts', 'ledger', 'usage_rejects', 'usage_stats', 'call_archive', 'blobs.files', 'blobs.chunks'];
/** The platform identity secret of billing under test; tests mint identities with it. */
export const BILLING_TEST_SECRET = 'billing-test-identity-secret-0123456789abcdef';

/**
 * Billing's store on the chosen engine (and its blobs: files beside the embedded store, GridFS in the MongoDB
 * database); the bus always embedded, on its own store, because Kafka topic
 * names are fixed (`gateway.usage.v1`) and shared with every other suite using the same broker.
 */
export class Engines {
  private constructor(readonly dir: string, readonly store: Store, readonly blobs: BlobStore, private readonly busStore: Store, readonly bus: Bus, readonly catalogFile: string) {}

  static async open(engine: StoreEngine = 'embedded'): Promise<Engines> {
    const dir = await mkdtemp(join(tmpdir(), 'gw-billing-'));
    const catalogFile = join(dir, 'catalog.json');
    await writeFile(catalogFile, JSON.stringify(TEST_CATALOG));
    const mongoUrl = engine === 'mongo' ? uniqueDatabase(process.env.MONGO_URL!) : '';
    const store = engine === 'mongo' ? createStore({ engine: 'mongo', url: mongoUrl }) : createStore({ engine: 'embedded', dataDir: join(dir, 'store') });
    const blobs = engine === 'mongo' ? createBlobStore({ engine: 'gridfs', url: mongoUrl }) : createBlobStore({ engine: 'fs', root: join(dir, 'blobs') });
    const busStore = createStore({ engine: 'embedded', dataDir: join(dir, 'bus') });
    const bus = createBus({ engine: 'embedded', store: busStore, pollMs: 20, leaseMs: 2_000 }, silentLogger());
    return new Engines(dir, store, blobs, busStore, bus, catalogFile);
  }

  priceBook(): PriceBook {
    return PriceBook.fromCatalog(readCatalog(this.catalogFile));
  }

  config(env: Record<string, string> = {}): BillingConfig {
    return billingConfigSchema.parse({
      BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: this.catalogFile, USAGE_BATCH_MAX: '100',
      GATEWAY_IDENTITY_SECRET: BILLING_TEST_SECRET, KEYS_GRPC_ADDR: '127.0.0.1:1', ...env,
    });
  }

  async startService(opts: { seeds: unknown[]; now?: () => Date }): Promise<RunningService> {
    return startBillingService({
      config: this.config({ SEED_ACCOUNTS: JSON.stringify(opts.seeds) }),
      store: this.store, bus: this.bus, blobs: this.blobs, logger: silentLogger(), now: opts.now,
    });
  }

  async close(): Promise<void> {
    try {
      await this.bus.close();
      await this.busStore.close();
      if (this.store.engine === 'mongo') {
        for (const name of BILLING_COLLECTIONS) await this.store.collection(name).deleteMany({});
      }
      await this.store.close();
      await this.blobs.close();
    } finally {
      await rm(this.dir, { recursive: true, force: true });
    }
  }
}

function uniqueDatabase(url: string): string {
  const u = new URL(url);
  u.pathname = `/billing_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  return u.toString();
}

let sequence = 0;

export function usageEvent(overrides: Partial<UsageEvent> = {}): UsageEvent {
  sequence++;
  return {
    request_id: `br-00000000-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    account_id: 'acct_a',
    key_hash: 'aa'.repeat(32),
    media_ids: [],
    model: 'test/chat',
    provider: 'sim',
    deployment: 'dep-chat',
    api_type: 'chat',
    provider_response_id: `chatcmpl-${sequence}`,
    served_model: 'chat',
    streamed: false,
    cancelled: false,
    finish_reason: 'stop',
    status: 'succeeded',
    usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 } as UsageEvent['usage'],
    latency_ms: 120,
    generation_time_ms: 100,
    created_at_ms: Date.parse('2026-11-02T10:00:00Z'),
    usage_estimated: false,
    hold_id: '',
    hold_micros: 0,
    trace_id: '',
    ...overrides,
  };
}

/** Wraps events as one delivered batch, as the bus hands it to the consumer. */
export function asBatch(events: UsageEvent[]): BusMessage<unknown>[] {
  return events.map((value, i) => ({ topic: TOPICS.usage, key: value.account_id, value: JSON.parse(JSON.stringify(value)), offset: String(i), partition: 0 }));
}

/** Polls until `check` resolves true. */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The store, with one collection's methods replaced (`patch` gets the real collection and returns the overrides). */
export function patchedStore(store: Store, name: string, patch: (c: Collection<never>) => Partial<Collection<never>>): Store {
  const wrapped = Object.create(store) as Store;
  wrapped.collection = ((n: string) => {
    const c = store.collection(n);
    return n === name ? Object.assign(Object.create(c) as object, patch(c as Collection<never>)) : c;
  }) as Store['collection'];
  return wrapped;
}
