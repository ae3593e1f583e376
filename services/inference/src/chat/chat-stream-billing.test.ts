import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, type Bus, type Subscription } from '@gw/bus';
import { createLogger, IDENTITY_HEADER, IdentitySigner, type Identity, type RunningService } from '@gw/platform';
import { TOPICS, type UsageEvent } from '@gw/proto';
import { startOpenAISimulator, type OpenAISimulator } from '@gw/simulators';
import { createStore, type Store } from '@gw/store';
import { startInferenceService } from '../app';
import { inferenceConfigSchema } from '../config';
import { createFsBlobStore } from '@gw/blobs';

const logger = createLogger('chat-stream-billing-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const IDENTITY: Identity = { accountId: 'acct_stream', keyHash: 'cd'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
const PRICE = { prompt_per_million: '1', completion_per_million: '2' };
const SECRET = 'chat-stream-billing-test-secret-0123456789';
/** The edge's signed identity for one request straight to inference. */
const identityHeaders = () => ({
  [IDENTITY_HEADER]: new IdentitySigner(SECRET, 'edge').mint({ method: 'POST', path: '/v1/chat/completions' }, IDENTITY, 'stream-billing-test'),
});
const SLOW_USAGE = { prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 };

/**
 * An OpenAI-format upstream that sends one chunk, then holds the rest and its usage until `release()`: the test
 * releases it once the gateway has seen its client leave, so the order does not depend on timing.
 */
function startPausingUpstream(): Promise<{ server: Server; release(): void }> {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 1, model: 'slow-1', choices, usage })}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk([{ index: 0, delta: { role: 'assistant', content: 'first words' }, finish_reason: null }]));
    held.push(() => res.end(
      chunk([{ index: 0, delta: { content: ' and the rest' }, finish_reason: 'stop' }]) + chunk([], SLOW_USAGE) + 'data: [DONE]\n\n',
    ));
  });
  const held: Array<() => void> = [];
  const release = () => { for (const end of held.splice(0)) end(); };
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, release })));
}

function catalog(simulator: OpenAISimulator, slowPort: number) {
  const model = (id: string, provider: string, providerModel: string) => ({
    id, name: id, owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z', architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    deployments: [{ id: `${id}-dep`, provider, provider_model: providerModel, price: PRICE }],
  });
  return {
    providers: {
      sim: { kind: 'openai-compatible', base_url: simulator.baseUrl, api_key_env: 'SIM_KEY' },
      slow: { kind: 'openai-compatible', base_url: `http://127.0.0.1:${slowPort}/v1`, api_key_env: 'SIM_KEY' },
    },
    models: [model('test/echo', 'sim', 'gpt-4o-mini'), model('test/pausing', 'slow', 'slow-1')],
  };
}

/**
 * A streamed chat call is billed: the usage event with the provider's usage reaches the bus, whatever the client
 * asked for and whether or not it stayed to the end. Real inference and billing services on embedded engines.
 */
describe('streamed chat completions reach billing', () => {
  let dir: string;
  const stores: Store[] = [];
  let bus: Bus;
  let simulator: OpenAISimulator;
  let pausing: Server;
  let releasePausing: () => void;
  let billing: RunningService;
  let inference: RunningService;
  let usageSub: Subscription;
  const events: UsageEvent[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-chat-stream-billing-'));
    let pausingUpstream: { server: Server; release(): void };
    [simulator, pausingUpstream] = await Promise.all([startOpenAISimulator(), startPausingUpstream()]);
    ({ server: pausing, release: releasePausing } = pausingUpstream);
    const catalogFile = join(dir, 'catalog.json');
    await writeFile(catalogFile, JSON.stringify(catalog(simulator, (pausing.address() as AddressInfo).port)));
    const store = (name: string) => { const s = createStore({ engine: 'embedded', dataDir: join(dir, name) }); stores.push(s); return s; };
    bus = createBus({ engine: 'embedded', store: store('bus'), pollMs: 20 }, logger);
    billing = await startBillingService({
      config: billingConfigSchema.parse({
        BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: catalogFile, SEED_ACCOUNTS: JSON.stringify([{ id: IDENTITY.accountId, wallet_usd: '10' }]),
        GATEWAY_IDENTITY_SECRET: SECRET,
      }),
      store: store('billing'), bus, logger, blobs: createFsBlobStore(join(dir, 'billing-blobs')),
    });
    inference = await startInferenceService({
      config: inferenceConfigSchema.parse({
        INFERENCE_HTTP_PORT: '0', INFERENCE_GRPC_PORT: '0', CATALOG_FILE: catalogFile, BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`, ASYNC_CHAT_WORKERS: '0',
        GATEWAY_IDENTITY_SECRET: SECRET,
      }),
      store: store('inference'), bus, logger, env: { SIM_KEY: 'k' },
    });
    usageSub = await bus.subscribe<UsageEvent>({
      topics: [TOPICS.usage], group: 'chat-stream-billing-test', handleBatch: async (batch) => { for (const m of batch) events.push(m.value); },
    });
  });

  afterAll(async () => {
    await usageSub?.stop();
    await inference?.stop();
    await billing?.stop();
    await bus?.close();
    for (const s of stores) await s.close();
    pausing?.closeAllConnections();
    await Promise.all([simulator?.close(), new Promise((r) => pausing?.close(r))]);
    await rm(dir, { recursive: true, force: true });
  });

  const chat = (body: object) => fetch(`http://127.0.0.1:${inference.httpPort}/v1/chat/completions`, {
    method: 'POST', headers: { ...identityHeaders(), 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  async function usageEventFor(requestId: string): Promise<UsageEvent> {
    for (let i = 0; i < 250; i++) {
      const found = events.find((e) => e.request_id === requestId);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no usage event for ${requestId}`);
  }
  const messages = [{ role: 'user', content: 'bill this streamed answer please' }];

  it('bills a stream without include_usage with the usage the provider reported', async () => {
    const plain = await chat({ model: 'test/echo', messages });
    const providerUsage = ((await plain.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    const res = await chat({ model: 'test/echo', messages, stream: true });
    const body = await res.text();
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(body).not.toContain('"usage":{');
    const event = await usageEventFor(res.headers.get('x-request-id')!);
    expect(event).toMatchObject({
      account_id: IDENTITY.accountId, key_hash: IDENTITY.keyHash, model: 'test/echo', deployment: 'test/echo-dep', api_type: 'chat',
      streamed: true, cancelled: false, status: 'succeeded', usage_estimated: false,
      usage: { prompt_tokens: providerUsage.prompt_tokens, completion_tokens: providerUsage.completion_tokens },
    });
    expect(providerUsage.completion_tokens).toBeGreaterThan(0);
  });

  it('bills a stream with include_usage with the usage the client was shown', async () => {
    const res = await chat({ model: 'test/echo', messages, stream: true, stream_options: { include_usage: true } });
    const chunks = (await res.text()).split('\n\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    const shown = chunks.at(-1).usage;
    expect(shown.completion_tokens).toBeGreaterThan(0);
    const event = await usageEventFor(res.headers.get('x-request-id')!);
    expect(event).toMatchObject({ streamed: true, cancelled: false, usage: { prompt_tokens: shown.prompt_tokens, completion_tokens: shown.completion_tokens } });
  });

  it('bills a stream the client left midway, with the usage the provider reported after it left', async () => {
    // Inference's own app behind a server of the test's, so the test sees when the service saw its client leave.
    let clientLeft!: Promise<void>;
    const front = createServer((req, res) => {
      clientLeft = new Promise((resolve) => res.once('close', () => { if (!res.writableFinished) resolve(); }));
      inference.httpHandler(req, res, () => res.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const requestId = await new Promise<string>((resolve, reject) => {
      const req = request(`http://127.0.0.1:${(front.address() as AddressInfo).port}/v1/chat/completions`, {
        method: 'POST', headers: { ...identityHeaders(), 'content-type': 'application/json' },
      }, (res) => {
        // Leave as soon as the first words arrive.
        res.once('data', () => { req.destroy(); resolve(String(res.headers['x-request-id'])); });
      });
      req.on('error', (err) => { if (!req.destroyed) reject(err); });
      req.end(JSON.stringify({ model: 'test/pausing', messages, stream: true }));
    });
    await clientLeft;
    releasePausing();
    const event = await usageEventFor(requestId);
    await new Promise((resolve) => front.close(resolve));
    expect(event).toMatchObject({ streamed: true, cancelled: true, usage_estimated: false, usage: SLOW_USAGE });
  });
});
