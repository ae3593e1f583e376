import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBlobStore, type BlobStore } from '@gw/blobs';
import { createBus, type Bus } from '@gw/bus';
import { inferenceConfigSchema, startInferenceService } from '@gw/inference';
import { createLogger, IdentitySigner, usdToMicros, type Identity, type RunningService } from '@gw/platform';
import { startSimulators, type RunningSimulator } from '@gw/simulators';
import { createStore, type Store } from '@gw/store';
import { startBatchService } from './app';
import { batchConfigSchema } from './config';
import { createFsBlobStore } from '@gw/blobs';

/**
 * Test-only support (no production code imports it): the real billing and inference services on embedded
 * engines in a temp dir, the provider simulators, and batch service instances on the engine under test
 * (embedded store + files on disk, or the MongoDB-wire server + GridFS), called as the edge calls them.
 */
export const SECRET = 'batch-test-identity-secret-0123456789abcdef';
export const ACCOUNT = 'acct_batch_test';
export const OTHER_ACCOUNT = 'acct_batch_other';
export const PLATFORM_MODEL = 'test/echo';
export const NATIVE_MODEL = 'test/native';
/** The simulator fails provider batches of this one as a whole. */
export const NATIVE_FAILING_MODEL = 'test/native-failing';
/** 1 and 2 micros per token; a native batch line costs half. */
const PRICE = { prompt_per_million: '1', completion_per_million: '2' };
const BATCH_PRICE = { prompt_per_million: '0.5', completion_per_million: '1' };

export type BatchEngine = 'embedded' | 'mongo';

export const identityOf = (accountId: string): Identity => ({ accountId, keyHash: 'cd'.repeat(32), isManagement: true, keyLimitMicros: null, keyLimitReset: null });

export const testLogger = () => createLogger('batch-test', process.env.TEST_LOG_LEVEL ?? 'silent');

function catalog(simulatorPort: number) {
  const model = (id: string, deployment: object) => ({
    id, name: id, owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z', architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    deployments: [deployment],
  });
  return {
    providers: { sim: { kind: 'openai-compatible', base_url: `http://127.0.0.1:${simulatorPort}/v1`, api_key_env: 'SIM_KEY' } },
    models: [
      model(PLATFORM_MODEL, { id: 'dep-echo', provider: 'sim', provider_model: 'echo-chat', price: PRICE }),
      model(NATIVE_MODEL, { id: 'dep-native', provider: 'sim', provider_model: 'echo-chat', price: PRICE, native_batch: true, batch_price: BATCH_PRICE }),
      model(NATIVE_FAILING_MODEL, { id: 'dep-native-failing', provider: 'sim', provider_model: 'sim-batch-fail', price: PRICE, native_batch: true, batch_price: BATCH_PRICE }),
    ],
  };
}

export interface CallOptions {
  body?: unknown;
  form?: FormData;
  /** Bytes sent as they are, with this content type. */
  raw?: { contentType: string; body: string };
  accountId?: string;
}

export interface BatchInstance {
  service: RunningService;
  url: string;
  stop(): Promise<void>;
}

export class BatchTestStack {
  private readonly signer = new IdentitySigner(SECRET, 'edge');
  private readonly instances: BatchInstance[] = [];
  batchStore!: Store;
  blobs!: BlobStore;
  private constructor(
    readonly engine: BatchEngine,
    private readonly dir: string,
    readonly simulator: RunningSimulator,
    private readonly bus: Bus,
    private readonly stores: Store[],
    private readonly services: RunningService[],
    private readonly catalogFile: string,
    private readonly billingUrl: string,
    private readonly addresses: { inferenceGrpc: string; billingGrpc: string },
    private readonly mongoUrl: string | null,
  ) {}

  static async start(engine: BatchEngine, opts: { latencyMs?: number } = {}): Promise<BatchTestStack> {
    const logger = testLogger();
    const dir = await mkdtemp(join(tmpdir(), 'gw-batch-'));
    const simulator = await startSimulators({ port: 0, latencyMs: opts.latencyMs });
    const catalogFile = join(dir, 'catalog.json');
    await writeFile(catalogFile, JSON.stringify(catalog(simulator.port)));
    const stores: Store[] = [];
    const store = (name: string) => { const s = createStore({ engine: 'embedded', dataDir: join(dir, name) }); stores.push(s); return s; };
    const bus = createBus({ engine: 'embedded', store: store('bus'), pollMs: 20 }, logger);
    const seeds = JSON.stringify([{ id: ACCOUNT, wallet_usd: '10' }, { id: OTHER_ACCOUNT, wallet_usd: '10' }]);
    const billing = await startBillingService({
      config: billingConfigSchema.parse({
        BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: catalogFile, SEED_ACCOUNTS: seeds, GATEWAY_IDENTITY_SECRET: SECRET, KEYS_GRPC_ADDR: '127.0.0.1:1',
      }),
      store: store('billing'), bus, logger, blobs: createFsBlobStore(join(dir, 'billing-blobs')),
    });
    const inference = await startInferenceService({
      config: inferenceConfigSchema.parse({
        INFERENCE_HTTP_PORT: '0', INFERENCE_GRPC_PORT: '0', CATALOG_FILE: catalogFile, ASYNC_CHAT_WORKERS: '0', GATEWAY_IDENTITY_SECRET: SECRET,
        BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, KEYS_GRPC_ADDR: '127.0.0.1:1',
      }),
      store: store('inference'), bus, logger, env: { SIM_KEY: 'k' },
    });
    let mongoUrl: string | null = null;
    if (engine === 'mongo') {
      if (!process.env.MONGO_URL) throw new Error('MONGO_URL is not set: run through jest (its global setup provides it)');
      const u = new URL(process.env.MONGO_URL);
      u.pathname = `/batch_test_${randomUUID().replace(/-/g, '')}`;
      mongoUrl = u.toString();
    }
    const stack = new BatchTestStack(engine, dir, simulator, bus, stores, [inference, billing], catalogFile, `http://127.0.0.1:${billing.httpPort}`,
      { inferenceGrpc: `127.0.0.1:${inference.grpcPort}`, billingGrpc: `127.0.0.1:${billing.grpcPort}` }, mongoUrl);
    stack.batchStore = mongoUrl ? createStore({ engine: 'mongo', url: mongoUrl }) : store('batch');
    stack.blobs = createBlobStore(mongoUrl ? { engine: 'gridfs', url: mongoUrl } : { engine: 'fs', root: join(dir, 'batch-blobs') });
    return stack;
  }

  /** A batch service instance on the stack's batch store and blobs; several may run at once, as replicas do. */
  async startBatch(env: Record<string, string> = {}): Promise<BatchInstance> {
    const service = await startBatchService({
      config: batchConfigSchema.parse({
        BATCH_HTTP_PORT: '0', CATALOG_FILE: this.catalogFile, GATEWAY_IDENTITY_SECRET: SECRET, INFERENCE_GRPC_ADDR: this.addresses.inferenceGrpc,
        BILLING_GRPC_ADDR: this.addresses.billingGrpc, BATCH_POLL_MS: '50', BATCH_PROGRESS_MS: '100', BATCH_PROVIDER_POLL_MS: '100', BATCH_LEASE_MS: '2000',
        BATCH_LINE_RETRY_MS: '100', ...env,
      }),
      store: this.batchStore, bus: this.bus, blobs: this.blobs, logger: testLogger(), env: { SIM_KEY: 'k' },
    });
    const instance = { service, url: `http://127.0.0.1:${service.httpPort}`, stop: () => service.stop() };
    this.instances.push(instance);
    return instance;
  }

  /** An HTTP call to a batch instance as the edge forwards it: identity signed for this very request. */
  async call(instance: BatchInstance, method: string, path: string, opts: CallOptions = {}): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
    return this.request(instance.url, method, path, opts);
  }

  async charged(requestId: string, accountId = ACCOUNT): Promise<number | null> {
    const res = await this.request(this.billingUrl, 'GET', `/v1/billing/requests/${requestId}`, { accountId });
    return res.status === 200 ? usdToMicros(res.body.data.charged_cost) : null;
  }

  async spendable(accountId = ACCOUNT): Promise<number> {
    return usdToMicros((await this.request(this.billingUrl, 'GET', '/v1/billing/balance', { accountId })).body.data.spendable);
  }

  private async request(base: string, method: string, path: string, opts: CallOptions) {
    const headers: Record<string, string> = {
      'x-gw-identity': this.signer.mint({ method, path }, identityOf(opts.accountId ?? ACCOUNT), randomUUID().replace(/-/g, '')),
    };
    let body: string | FormData | undefined;
    if (opts.form) body = opts.form;
    else if (opts.raw) {
      headers['content-type'] = opts.raw.contentType;
      body = opts.raw.body;
    } else if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    const res = await fetch(`${base}${path}`, { method, headers, body });
    const text = await res.text();
    // A file's content stays text even when it is one JSON line.
    let parsed: unknown = text;
    if (res.headers.get('content-type')?.startsWith('application/json')) {
      try { parsed = JSON.parse(text); } catch { /* raw content */ }
    }
    return { status: res.status, body: parsed as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  async close(): Promise<void> {
    for (const i of this.instances) await i.stop();
    for (const s of this.services) await s.stop();
    await this.bus.close();
    await this.blobs.close();
    await this.batchStore.close();
    for (const s of this.stores) await s.close();
    await this.simulator.close();
    if (this.mongoUrl) {
      const conn = await mongoose.createConnection(this.mongoUrl).asPromise();
      await conn.dropDatabase();
      await conn.close();
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A multipart upload as clients send it. */
export function uploadForm(content: string, purpose: string | null = 'batch', filename = 'input.jsonl'): FormData {
  const form = new FormData();
  if (purpose !== null) form.append('purpose', purpose);
  form.append('file', new Blob([content]), filename);
  return form;
}

export const chatLine = (customId: string, content: string, model = PLATFORM_MODEL, extra: object = {}) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content }], ...extra } });

/** Polls `check` until it holds; fails naming `what`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
