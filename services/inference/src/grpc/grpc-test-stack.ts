import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, type Bus, type Subscription } from '@gw/bus';
import { keysConfigSchema, startKeysService } from '@gw/keys';
import { createLogger, IdentitySigner, type Identity, type RunningService } from '@gw/platform';
import { TOPICS, type UsageEvent } from '@gw/proto';
import { startOpenAISimulator, type OpenAISimulator } from '@gw/simulators';
import { createStore, type Store } from '@gw/store';
import { startInferenceService } from '../app';
import { inferenceConfigSchema } from '../config';

/**
 * Test-only support (no production code imports it): the real keys, billing and inference services on
 * embedded engines in a temp dir, an OpenAI simulator and an upstream that pauses mid-stream, so the gRPC API
 * is tested over the real wire with real key checks, spend holds and usage events.
 */
export const STACK_SECRET = 'inference-grpc-test-identity-secret-0123456789';
/** The seeded management key of the funded account: an API key an internal team would present. */
export const API_KEY = `sk-gw-v1-${'ab'.repeat(24)}`;
export const FUNDED = 'acct_grpc';
export const BROKE = 'acct_grpc_broke';
/** 1 USD per million prompt tokens, 2 per million completion tokens: 1 and 2 micros per token. */
const PRICE = { prompt_per_million: '1', completion_per_million: '2' };
export const PRICE_FACTOR_PPM = 800_000;
export const PAUSED_USAGE = { prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 };

export const identityOf = (accountId: string): Identity => ({
  accountId, keyHash: 'ef'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null,
});
/** How the batch service signs: a service identity acting for an account. */
export const serviceSigner = () => new IdentitySigner(STACK_SECRET, 'batch');

/** An OpenAI-format upstream that sends one chunk, pauses (time for the client to leave), then the rest and its usage. */
function startPausingUpstream(pauseMs: number): Promise<Server> {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1, model: 'slow-1', choices, usage })}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: 'first words' }, finish_reason: null }]));
    setTimeout(() => res.end(
      chunk([{ index: 0, delta: { content: ' and the rest' }, finish_reason: 'stop' }]) + chunk([], PAUSED_USAGE) + 'data: [DONE]\n\n',
    ), pauseMs);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function catalog(simulator: OpenAISimulator, pausingPort: number) {
  const model = (id: string, provider: string, providerModel: string) => ({
    id, name: id, owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z', architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    deployments: [{ id: `${id}-dep`, provider, provider_model: providerModel, price: PRICE }],
  });
  return {
    providers: {
      sim: { kind: 'openai-compatible', base_url: simulator.baseUrl, api_key_env: 'SIM_KEY' },
      slow: { kind: 'openai-compatible', base_url: `http://127.0.0.1:${pausingPort}/v1`, api_key_env: 'SIM_KEY' },
    },
    models: [model('test/echo', 'sim', 'gpt-4o-mini'), model('test/pausing', 'slow', 'slow-1')],
  };
}

export interface GrpcTestStack {
  inferenceAddr: string;
  simulator: OpenAISimulator;
  /** Usage events seen on the bus so far. */
  events: UsageEvent[];
  usageEventFor(requestId: string): Promise<UsageEvent>;
  inferenceStore: Store;
  close(): Promise<void>;
}

export async function startGrpcTestStack(): Promise<GrpcTestStack> {
  const logger = createLogger('inference-grpc-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const dir = await mkdtemp(join(tmpdir(), 'gw-inference-grpc-'));
  const [simulator, pausing] = await Promise.all([startOpenAISimulator(), startPausingUpstream(400)]);
  const catalogFile = join(dir, 'catalog.json');
  await writeFile(catalogFile, JSON.stringify(catalog(simulator, (pausing.address() as AddressInfo).port)));
  const stores: Store[] = [];
  const store = (name: string) => { const s = createStore({ engine: 'embedded', dataDir: join(dir, name) }); stores.push(s); return s; };
  const bus: Bus = createBus({ engine: 'embedded', store: store('bus'), pollMs: 20 }, logger);
  const services: RunningService[] = [];
  let usageSub: Subscription | undefined;
  const close = async () => {
    await usageSub?.stop();
    for (const s of services.toReversed()) await s.stop();
    await bus.close();
    for (const s of stores) await s.close();
    pausing.closeAllConnections();
    await Promise.all([simulator.close(), new Promise((r) => pausing.close(r))]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const seeds = JSON.stringify([
      { id: FUNDED, wallet_usd: '10', price_factor: '0.8', management_key: API_KEY },
      { id: BROKE, wallet_usd: '0' },
    ]);
    const billing = await startBillingService({
      config: billingConfigSchema.parse({
        BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: catalogFile, SEED_ACCOUNTS: seeds, GATEWAY_IDENTITY_SECRET: STACK_SECRET,
        KEYS_GRPC_ADDR: '127.0.0.1:1',
      }),
      store: store('billing'), bus, logger,
    });
    services.push(billing);
    const keys = await startKeysService({
      config: keysConfigSchema.parse({
        KEYS_HTTP_PORT: '0', KEYS_GRPC_PORT: '0', BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, SEED_ACCOUNTS: seeds, GATEWAY_IDENTITY_SECRET: STACK_SECRET,
      }),
      store: store('keys'), bus, logger, announce: () => undefined,
    });
    services.push(keys);
    const inferenceStore = store('inference');
    const inference = await startInferenceService({
      config: inferenceConfigSchema.parse({
        INFERENCE_HTTP_PORT: '0', INFERENCE_GRPC_PORT: '0', CATALOG_FILE: catalogFile, ASYNC_CHAT_WORKERS: '0', GATEWAY_IDENTITY_SECRET: STACK_SECRET,
        BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, KEYS_GRPC_ADDR: `127.0.0.1:${keys.grpcPort}`, ABANDONED_STREAM_DRAIN_MS: '5000',
      }),
      store: inferenceStore, bus, logger, env: { SIM_KEY: 'k' },
    });
    services.push(inference);
    const events: UsageEvent[] = [];
    usageSub = await bus.subscribe<UsageEvent>({
      topics: [TOPICS.usage], group: 'inference-grpc-test', handleBatch: async (batch) => { for (const m of batch) events.push(m.value); },
    });
    return {
      inferenceAddr: `127.0.0.1:${inference.grpcPort}`, simulator, events, inferenceStore, close,
      usageEventFor: async (requestId) => {
        for (let i = 0; i < 500; i++) {
          const found = events.find((e) => e.request_id === requestId);
          if (found) return found;
          await new Promise((r) => setTimeout(r, 20));
        }
        throw new Error(`no usage event for ${requestId}`);
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}
