import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OPEN_CALLS_COLLECTION, type OpenCallDoc } from '@gw/billed-call';
import { createFsBlobStore, type BlobStore } from '@gw/blobs';
import { billingConfigSchema, startBillingService } from '@gw/billing';
import { createBus, type Bus } from '@gw/bus';
import { createLogger, IDENTITY_HEADER, IdentitySigner, type Identity, type RunningService } from '@gw/platform';
import { TOPICS, type UsageEvent } from '@gw/proto';
import { startSimulators } from '@gw/simulators';
import { createStore, type Store } from '@gw/store';
import { startMediaService } from './app';
import { mediaConfigSchema } from './config';
import { imagesCollection } from './images/image-records';

const SECRET = 'media-test-identity-secret-0123456789abcdef';
const logger = createLogger('media-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const identity: Identity = { accountId: 'acct_media', keyHash: 'ab'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
const signer = new IdentitySigner(SECRET, 'edge');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

const catalog = (simPort: number) => ({
  providers: { sim: { kind: 'openai-compatible', base_url: `http://127.0.0.1:${simPort}/v1`, api_key_env: 'SIM_KEY' } },
  models: [{
    id: 'test/image', name: 'image', owned_by: 'tests', updated_at: '2026-11-01T00:00:00Z', media: 'image',
    architecture: { input_modalities: ['text'], output_modalities: ['image'] },
    parameter_schema: { n: { type: 'integer', min: 1, max: 4 }, response_format: { type: 'string', options: ['url', 'b64_json'] }, images: { type: 'array', max_items: 4 } },
    deployments: [{ id: 'dep-image', provider: 'sim', provider_model: 'gpt-image-1', price: { prompt_per_million: '0', completion_per_million: '0', per_image: '0.02' } }],
  }, {
    id: 'test/speech', name: 'speech', owned_by: 'tests', updated_at: '2026-11-01T00:00:00Z', media: 'speech',
    architecture: { input_modalities: ['text'], output_modalities: ['audio'] }, supported_voices: ['alloy'],
    parameter_schema: { voice: { type: 'string', options: ['alloy'] }, response_format: { type: 'string', options: ['wav'] } },
    deployments: [{ id: 'dep-speech', provider: 'sim', provider_model: 'gpt-4o-mini-tts', price: { prompt_per_million: '0', completion_per_million: '0', per_audio_second: '0.001' } }],
  }],
});

/**
 * The media service on real engines (embedded store and bus, filesystem blobs), real billing (spend holds over
 * gRPC, usage consumed from the bus) and the real OpenAI simulator; called the way the edge calls it.
 */
describe('media service (embedded store and bus, filesystem blobs, billing, simulator)', () => {
  let dir: string;
  let store: Store;
  let bus: Bus;
  let blobs: BlobStore;
  let billing: RunningService;
  let media: RunningService;
  let sim: Awaited<ReturnType<typeof startSimulators>>;
  let env: NodeJS.ProcessEnv;

  const startMedia = () => startMediaService({ config: mediaConfigSchema.parse(env), store, bus, blobs, logger, env });
  async function call(service: RunningService, method: string, path: string, body?: unknown, who: Identity | null = identity) {
    const res = await fetch(`http://127.0.0.1:${service.httpPort}${path}`, {
      method,
      headers: { [IDENTITY_HEADER]: signer.mint({ method, path }, who, 'trace-media-test'), ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    try { json = JSON.parse(text); } catch { json = text; }
    return { status: res.status, headers: res.headers, body: json };
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-media-'));
    store = createStore({ engine: 'embedded', dataDir: join(dir, 'store') });
    bus = createBus({ engine: 'embedded', store, pollMs: 20 }, logger);
    blobs = createFsBlobStore(join(dir, 'blobs'));
    sim = await startSimulators({ port: 0 });
    const catalogFile = join(dir, 'catalog.json');
    await writeFile(catalogFile, JSON.stringify(catalog(sim.port)));
    billing = await startBillingService({
      config: billingConfigSchema.parse({
        BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', CATALOG_FILE: catalogFile, GATEWAY_IDENTITY_SECRET: SECRET, KEYS_GRPC_ADDR: '127.0.0.1:1',
        SEED_ACCOUNTS: JSON.stringify([{ id: identity.accountId, credit_usd: '1' }]),
      }),
      store, bus, logger, blobs: createFsBlobStore(join(dir, 'billing-blobs')),
    });
    env = {
      MEDIA_HTTP_PORT: '0', CATALOG_FILE: catalogFile, GATEWAY_IDENTITY_SECRET: SECRET, BILLING_GRPC_ADDR: `127.0.0.1:${billing.grpcPort}`,
      MEDIA_PUBLIC_BASE_URL: 'https://gateway.example', SIM_KEY: 'sim-key', OPEN_CALL_CHECKPOINT_MS: '100',
    };
    media = await startMedia();
  });

  afterAll(async () => {
    await media?.stop();
    await billing?.stop();
    await sim?.close();
    await bus?.close();
    await blobs?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores each generated image as a record and a blob, and bills it under every id of the call', async () => {
    const usage: UsageEvent[] = [];
    const sub = await bus.subscribe<UsageEvent>({ topics: [TOPICS.usage], group: 'media-test-observer', from: 'earliest', handleBatch: async (m) => { usage.push(...m.map((x) => x.value)); } });
    const res = await call(media, 'POST', '/v1/images/generations', { model: 'test/image', prompt: 'two squares', n: 2 });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const ids: string[] = res.body.data.map((d: { id: string }) => d.id);
    expect(res.body.data[0].url).toMatch(/^https:\/\/gateway\.example\/v1\/media\/signed\//);

    const records = await imagesCollection(store).find({ request_id: requestId });
    expect(records.map((r) => r._id).sort()).toEqual([...ids].sort());
    for (const r of records) expect(await blobs.stat(r.blob_key)).toMatchObject({ bytes: r.bytes });
    // The signed link is served by media itself (the edge lets it through without a key).
    const link = new URL(res.body.data[0].url);
    const content = await fetch(`http://127.0.0.1:${media.httpPort}${link.pathname}`, { headers: { [IDENTITY_HEADER]: signer.mint({ method: 'GET', path: link.pathname }, null, 't') } });
    expect(Buffer.from(await content.arrayBuffer()).subarray(0, 4)).toEqual(PNG);

    for (let i = 0; i < 100 && !usage.some((u) => u.request_id === requestId); i++) await new Promise((r) => setTimeout(r, 50));
    await sub.stop();
    expect(usage.find((u) => u.request_id === requestId)).toMatchObject({ api_type: 'image', model: 'test/image', deployment: 'dep-image', media_ids: expect.arrayContaining(ids), usage: { generated_images: 2 } });
    for (const id of [requestId, ...ids]) {
      let found = await call(billing, 'GET', `/v1/billing/requests/${id}`);
      for (let i = 0; i < 100 && found.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        found = await call(billing, 'GET', `/v1/billing/requests/${id}`);
      }
      expect(found.body.data).toMatchObject({ request_id: requestId, list_cost: '0.040000' });
    }
  });

  it('records outlive a restart of the service; delete removes the record and its blob', async () => {
    await call(media, 'POST', '/v1/images/generations', { model: 'test/image', prompt: 'kept' });
    const before = await call(media, 'GET', '/v1/images?limit=100');
    await media.stop();
    media = await startMedia();
    const after = await call(media, 'GET', '/v1/images?limit=100');
    expect(after.body.data).toEqual(before.body.data);
    const victim = after.body.data[0];
    const record = (await imagesCollection(store).findOne({ _id: victim.id }))!;
    expect((await call(media, 'DELETE', `/v1/images/${victim.id}`)).body).toEqual({ id: victim.id, object: 'image.deleted', deleted: true });
    expect(await blobs.stat(record.blob_key)).toBeNull();
    expect((await call(media, 'GET', `/v1/images/${victim.id}`)).status).toBe(404);
  });

  it('journals a speech stream with the seconds of audio sent so far, and drops the entry once the stream is billed', async () => {
    const path = '/v1/audio/speech';
    const res = await fetch(`http://127.0.0.1:${media.httpPort}${path}`, {
      method: 'POST',
      headers: { [IDENTITY_HEADER]: signer.mint({ method: 'POST', path }, identity, 'trace-media-test'), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/speech', input: 'a long reading. '.repeat(100), voice: 'alloy', response_format: 'wav' }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    const entry = () => store.collection<OpenCallDoc>(OPEN_CALLS_COLLECTION).findOne({ _id: requestId });
    const reader = res.body!.getReader();
    let journaled: OpenCallDoc | null = null;
    for (let i = 0; i < 200 && !((journaled?.usage?.audio_duration_seconds ?? 0) > 0); i++) {
      await reader.read();
      journaled = await entry();
    }
    expect(journaled).toMatchObject({ api_type: 'speech', model: 'test/speech', deployment: 'dep-speech', account_id: identity.accountId });
    expect(journaled!.usage!.audio_duration_seconds).toBeGreaterThan(0);
    while (!(await reader.read()).done) { /* the rest of the audio */ }
    for (let i = 0; i < 100 && (await entry()) !== null; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await entry()).toBeNull();
  }, 30_000);

  it('an image whose bytes went while its record was read (a delete racing the download) is not found, never a 500', async () => {
    const id = (await call(media, 'POST', '/v1/images/generations', { model: 'test/image', prompt: 'short-lived' })).body.data[0].id;
    const record = (await imagesCollection(store).findOne({ _id: id }))!;
    // The moment inside a concurrent DELETE: the record still read, the bytes already removed.
    await blobs.delete(record.blob_key);
    expect(await call(media, 'GET', `/v1/images/${id}/content`)).toMatchObject({ status: 404, body: { error: { param: 'image_id', code: 'image_not_found' } } });
  });

  it('an input image deleted while its asset reference was resolved is a 400 naming the param, never a 500', async () => {
    const id = (await call(media, 'POST', '/v1/images/generations', { model: 'test/image', prompt: 'to edit' })).body.data[0].id;
    const record = (await imagesCollection(store).findOne({ _id: id }))!;
    await blobs.delete(record.blob_key);
    const res = await call(media, 'POST', '/v1/images/edits', { model: 'test/image', prompt: 'edit it', images: [`asset://${id}`] });
    expect(res).toMatchObject({ status: 400, body: { error: { param: 'images[0]', code: 'asset_not_found' } } });
  });

  it('is ready only while its store answers', async () => {
    expect((await media.health.report()).ready).toBe(true);
    expect((await media.health.report()).checks).toMatchObject({ store: true, bus: true });
  });
});
