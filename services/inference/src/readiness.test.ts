import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, OUTBOX_COLLECTION, type Bus } from '@gw/bus';
import { createLogger, IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { startOpenAISimulator, type OpenAISimulator } from '@gw/simulators';
import { createStore, type Store } from '@gw/store';
import { startInferenceService } from './app';
import { inferenceConfigSchema } from './config';

jest.setTimeout(60_000);

const logger = createLogger('inference-readiness-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const ACCOUNT = 'acct_ready';
const KEY_HASH = 'ab'.repeat(32);
const SECRET = 'inference-readiness-test-secret-0123456789';

/**
 * Readiness means "this instance can serve": with the bus down inference keeps serving (usage waits in the
 * outbox), so it must stay in rotation; without its store it cannot keep usage safe, so it must leave.
 */
describe('inference readiness (real billing, embedded engines, OpenAI simulator)', () => {
  let dir: string;
  const stores: Store[] = [];
  let inferenceStore: Store;
  let realBus: Bus;
  let sim: OpenAISimulator;
  let billing: RunningService;
  let inference: RunningService;
  const down = { bus: false, store: false };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-inference-ready-'));
    const open = (name: string) => {
      const s = createStore({ engine: 'embedded', dataDir: join(dir, name) });
      stores.push(s);
      return s;
    };
    sim = await startOpenAISimulator();
    const catalogFile = join(dir, 'catalog.json');
    await writeFile(catalogFile, JSON.stringify({
      providers: { sim: { kind: 'openai-compatible', base_url: sim.baseUrl, api_key_env: 'SIM_KEY' } },
      models: [{
        id: 'test/chat', name: 'Test chat', owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
        architecture: { input_modalities: ['text'], output_modalities: ['text'] },
        deployments: [{ id: 'dep', provider: 'sim', provider_model: 'gpt-4o-mini', price: { prompt_per_million: '1', completion_per_million: '1' } }],
      }],
    }));
    realBus = createBus({ engine: 'embedded', store: open('bus'), pollMs: 50 }, logger);
    billing = await startBillingService({
      config: billingConfigSchema.parse({ BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: catalogFile, SEED_ACCOUNTS: JSON.stringify([{ id: ACCOUNT, wallet_usd: '1' }]),
        GATEWAY_IDENTITY_SECRET: SECRET }),
      store: open('billing'), bus: realBus, logger,
    });
    // The real bus and store, made to fail as during an outage.
    const bus: Bus = {
      ...realBus,
      publish: (topic, messages) => (down.bus ? Promise.reject(new Error('broker down (test)')) : realBus.publish(topic, messages)),
      ping: async () => !down.bus && (await realBus.ping()),
    };
    inferenceStore = open('inference');
    const store = Object.assign(Object.create(inferenceStore) as Store, { ping: async () => !down.store && (await inferenceStore.ping()) });
    inference = await startInferenceService({
      config: inferenceConfigSchema.parse({ INFERENCE_HTTP_PORT: '0', INFERENCE_GRPC_PORT: '0', CATALOG_FILE: catalogFile, BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, ASYNC_CHAT_WORKERS: '0',
        GATEWAY_IDENTITY_SECRET: SECRET }),
      store, bus, logger, env: { SIM_KEY: 'sk-sim' },
    });
    // The balance-event consumer joins in the background after the start.
    const deadline = Date.now() + 20_000;
    while ((await inference.health.report()).degraded.length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  });

  afterAll(async () => {
    await inference?.stop();
    await billing?.stop();
    await realBus?.close();
    for (const s of stores) await s.close();
    await sim?.close();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    down.bus = false;
    down.store = false;
  });

  async function readyz() {
    const res = await fetch(`http://127.0.0.1:${inference.httpPort}/readyz`);
    return { status: res.status, body: (await res.json()) as { degraded: string[] } };
  }

  const chat = () => fetch(`http://127.0.0.1:${inference.httpPort}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [IDENTITY_HEADER]: new IdentitySigner(SECRET, 'edge').mint({ method: 'POST', path: '/v1/chat/completions' },
        { accountId: ACCOUNT, keyHash: KEY_HASH, isManagement: false, keyLimitMicros: null, keyLimitReset: null }, 'readiness-test'),
    },
    body: JSON.stringify({ model: 'test/chat', messages: [{ role: 'user', content: 'hello' }] }),
  });

  it('stays ready with the bus down, serves every call, and keeps their usage in the outbox', async () => {
    down.bus = true;
    expect(await readyz()).toMatchObject({ status: 200, body: { ready: true, checks: { store: true, bus: false }, degraded: ['bus'] } });
    const statuses = await Promise.all(Array.from({ length: 5 }, async () => (await chat()).status));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const pending = () => inferenceStore.collection(OUTBOX_COLLECTION).count({});
    // Usage leaves in batches off the response path: it reaches the outbox shortly after the answers.
    const parked = Date.now() + 10_000;
    while ((await pending()) === 0 && Date.now() < parked) await new Promise((r) => setTimeout(r, 20));
    expect(await pending()).toBeGreaterThan(0);

    down.bus = false;
    const deadline = Date.now() + 20_000;
    while ((await pending()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await pending()).toBe(0);
    expect((await readyz()).body.degraded).toEqual([]);
  });

  it('is not ready without its store', async () => {
    down.store = true;
    expect(await readyz()).toMatchObject({ status: 503, body: { ready: false, checks: { store: false } } });
  });
});
