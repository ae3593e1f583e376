import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStore, type BlobStore } from '@gw/blobs';
import { createBus, type Bus, type BusMessage } from '@gw/bus';
import { createLogger, IdentitySigner, type Identity, type RunningService } from '@gw/platform';
import { TOPICS, type CallbackRequested, type CallFailed, type UsageEvent } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { startSimulators, type RunningSimulator } from '../../../../packages/simulators/src';
import { startBillingService } from '../../../billing/src/app';
import { billingConfigSchema } from '../../../billing/src/config';
import { startMediaService } from '../app';
import { mediaConfigSchema, type MediaConfig } from '../config';

/** Test helpers: real embedded engines, the provider simulators, and the media service started as production starts it. */

export const MEDIA_TEST_SECRET = 'media-test-identity-secret-0123456789abcdef';
export const SORA_MODEL = 'test/sora-video';
export const SEEDANCE_MODEL = 'test/seedance-video';
export const CHAT_MODEL = 'test/chat';
export const SEEDREAM_MODEL = 'test/seedream-image';

const seedanceSchema = {
  resolution: { type: 'string', options: ['480p', '720p', '1080p'], default: '720p', min: null, max: null },
  duration: { type: 'integer', options: null, default: 5, min: 2, max: 12 },
  aspect_ratio: { type: 'string', options: ['16:9', '9:16', '1:1', '21:9'], default: '16:9', min: null, max: null },
  generate_audio: { type: 'boolean', options: null, default: false, min: null, max: null },
  return_last_frame: { type: 'boolean', options: null, default: false, min: null, max: null },
  seed: { type: 'integer', options: null, default: -1, min: -1, max: 4294967295 },
  watermark: { type: 'boolean', options: null, default: false, min: null, max: null },
};
const soraSchema = {
  resolution: { type: 'string', options: ['720p', '1080p'], default: '720p', min: null, max: null },
  duration: { type: 'integer', options: [4, 8, 12], default: 4, min: null, max: null },
  aspect_ratio: { type: 'string', options: ['16:9', '9:16'], default: '16:9', min: null, max: null },
};

const seedreamSchema = {
  size: { type: 'string', options: null, default: '2048x2048', min: null, max: null },
  seed: { type: 'integer', options: null, default: -1, min: -1, max: 2147483647 },
  watermark: { type: 'boolean', options: null, default: true, min: null, max: null },
  response_format: { type: 'string', options: ['url', 'b64_json'], default: 'url', min: null, max: null },
  sequential_image_generation: { type: 'string', options: ['auto', 'disabled'], default: 'disabled', min: null, max: null },
  sequential_image_generation_options: { type: 'object', options: null, default: null, min: null, max: null },
  images: { type: 'array', options: null, default: null, min: null, max: null },
};

function model(id: string, outputs: string[], schema: object, provider: string, providerModel: string) {
  return {
    id, name: id, owned_by: 'test', updated_at: '2026-11-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: outputs, tokenizer: null }, parameter_schema: schema,
    ...(outputs.includes('video') ? { media: 'video' } : outputs.includes('image') ? { media: 'image' } : {}),
    deployments: [{ id: `${id}-dep`, provider, provider_model: providerModel, price: { prompt_per_million: '0', completion_per_million: '0', per_video_second: '0.02', per_image: '0.03' } }],
  };
}

export interface VideoTestBed {
  sim: RunningSimulator;
  store: Store;
  bus: Bus;
  blobs: BlobStore;
  config: MediaConfig;
  /** The real billing service on the same engines (spend holds, the ledger, the lookup). */
  billing: RunningService;
  /** Starts a media instance; `blobs` replaces the blob store it writes to (to inject faults). */
  start(extra?: Partial<MediaConfig>, blobs?: BlobStore): Promise<RunningService>;
  /** Every usage event and callback published so far (the bus, read by a group of the test's own). */
  usage: UsageEvent[];
  callbacks: CallbackRequested[];
  /** Every failed call reported for the statistics. */
  failures: CallFailed[];
  close(): Promise<void>;
}

export async function openVideoTestBed(): Promise<VideoTestBed> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-media-videos-'));
  const sim = await startSimulators();
  const catalogFile = join(dir, 'catalog.json');
  await writeFile(catalogFile, JSON.stringify({
    providers: {
      sim: { kind: 'openai-compatible', base_url: `${sim.url}/v1`, api_key_env: 'SIMULATOR_API_KEY', timeout_ms: 5_000 },
      ark: { kind: 'ark', base_url: `${sim.url}/api/v3`, api_key_env: 'SIMULATOR_API_KEY', timeout_ms: 5_000 },
    },
    models: [
      model(SORA_MODEL, ['video'], soraSchema, 'sim', 'sora-2'),
      model(SEEDANCE_MODEL, ['video'], seedanceSchema, 'ark', 'seedance-1-0-pro-250528'),
      model(CHAT_MODEL, ['text'], {}, 'sim', 'echo-chat'),
      model(SEEDREAM_MODEL, ['image'], seedreamSchema, 'ark', 'seedream-4-0-250828'),
    ],
  }));
  const store = createStore({ engine: 'embedded', dataDir: join(dir, 'data') });
  const logger = createLogger('media-test', process.env.TEST_LOG_LEVEL ?? 'silent');
  const bus = createBus({ engine: 'embedded', store, pollMs: 50 }, logger);
  const blobs = createBlobStore({ engine: 'fs', root: join(dir, 'blobs') });
  const billing = await startBillingService({
    config: billingConfigSchema.parse({
      BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: catalogFile, GATEWAY_IDENTITY_SECRET: MEDIA_TEST_SECRET, KEYS_GRPC_ADDR: '127.0.0.1:1',
      BIND_HOST: '127.0.0.1', SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_alice', credit_usd: '10' }, { id: 'acct_bob', credit_usd: '10' }, { id: 'acct_broke', credit_usd: '0' }]),
    }),
    store, bus, logger, blobs: createBlobStore({ engine: 'fs', root: join(dir, 'billing-blobs') }),
  });
  const config = mediaConfigSchema.parse({
    BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`,
    MEDIA_HTTP_PORT: '0', GATEWAY_IDENTITY_SECRET: MEDIA_TEST_SECRET, BIND_HOST: '127.0.0.1', CATALOG_FILE: catalogFile,
    MEDIA_PUBLIC_BASE_URL: 'http://127.0.0.1:9', VIDEO_POLL_MIN_MS: '20', VIDEO_POLL_MAX_MS: '50', VIDEO_CLAIM_POLL_MS: '50',
    VIDEO_LEASE_MS: '1000',
    // Test-only: callbacks go to loopback (the webhooks service, not started here, would deliver them).
    GATEWAY_ALLOW_LOOPBACK_CALLBACKS: 'true',
  });
  const usage: UsageEvent[] = [];
  const callbacks: CallbackRequested[] = [];
  const failures: CallFailed[] = [];
  const byTopic: Record<string, unknown[]> = { [TOPICS.usage]: usage, [TOPICS.callbacks]: callbacks, [TOPICS.callFailures]: failures };
  const subscription = await bus.subscribe<unknown>({
    topics: [TOPICS.usage, TOPICS.callbacks, TOPICS.callFailures], group: `test-${randomUUID()}`,
    handleBatch: async (messages: BusMessage<unknown>[]) => {
      for (const m of messages) byTopic[m.topic]?.push(m.value);
    },
  });
  const env = { ...process.env, SIMULATOR_API_KEY: 'sk-sim' };
  return {
    sim, store, bus, blobs, config, billing, usage, callbacks, failures,
    start: (extra = {}, instanceBlobs = blobs) => startMediaService({ config: { ...config, ...extra }, store, bus, blobs: instanceBlobs, logger, env }),
    close: async () => {
      await subscription.stop();
      await billing.stop();
      await bus.close();
      await blobs.close();
      await store.close();
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function identityOf(accountId: string): Identity {
  return { accountId, keyHash: `hash-${accountId}`, isManagement: false, keyLimitMicros: null, keyLimitReset: null };
}

/** A request to the service's own port as the edge forwards it: with an identity token bound to it. */
export async function callMedia(
  port: number, method: string, path: string, identity: Identity | null, body?: unknown, headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any; raw: Buffer }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const token = new IdentitySigner(MEDIA_TEST_SECRET, 'edge').mint({ method, path }, identity, `trace-${randomUUID()}`);
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method, redirect: 'manual',
    headers: { 'x-gw-identity': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const raw = Buffer.from(await res.arrayBuffer());
  let parsed: unknown = raw.toString('utf8');
  try { parsed = JSON.parse(parsed as string); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body: parsed, raw };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
