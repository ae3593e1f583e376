import { createBatchingPublisher, createBus, createOutbox, type BatchingPublisher, type Outbox } from '@gw/bus';
import { OpenCallJournal } from '@gw/billed-call';
import { catalogSchema } from '@gw/catalog';
import { createChatProvider } from '@gw/providers';
import { startOpenAISimulator, type OpenAISimulator } from '@gw/simulators';
import { createStore, type Store } from '@gw/store';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelDirectory } from '../catalog/model-objects';
import { ChatService } from '../chat/chat-service';
import { DeploymentRouter } from '../routing/deployment-router';
import type { SpendGrants } from '../spend/spend-grants';
import { UsageRecorder } from '../usage/usage-recorder';
import { JobWorkerPool } from '@gw/jobs';
import { chatJobStore, type ChatJobPayload, type ChatJobResult, type ChatJobStore } from './chat-job';
import { chatJobHandler } from './chat-job-runner';
import { eventually, IDENTITY, insertJob, openTestStore, queuedJob, silentLogger, type TestStore } from './chat-job-test-support';
import { CallArchiver } from '@gw/call-archive';

const BODY = { model: 'test/chat', messages: [{ role: 'user', content: 'generate me once' }] };

describe('an async chat job re-run after its worker died', () => {
  let sim: OpenAISimulator;
  let t: TestStore;
  let dir: string;
  let busStore: Store;
  let outbox: Outbox;
  let publisher: BatchingPublisher;
  let jobs: ChatJobStore;
  let chat: ChatService;
  let pool: JobWorkerPool<ChatJobPayload, ChatJobResult> | undefined;
  const provider = createChatProvider('openai-compatible');

  beforeAll(async () => {
    sim = await startOpenAISimulator();
    t = await openTestStore('embedded');
    dir = await mkdtemp(join(tmpdir(), 'gw-rerun-'));
    busStore = createStore({ engine: 'embedded', dataDir: dir });
    const bus = createBus({ engine: 'embedded', store: busStore, pollMs: 50 }, silentLogger());
    outbox = createOutbox({ bus, store: t.store, logger: silentLogger() });
    publisher = createBatchingPublisher({ outbox, logger: silentLogger(), lingerMs: 5 });
    const catalog = catalogSchema.parse({
      providers: { sim: { kind: 'openai-compatible', base_url: sim.baseUrl, api_key_env: 'SIM_KEY' } },
      models: [{
        id: 'test/chat', name: 'Test chat', owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
        architecture: { input_modalities: ['text'], output_modalities: ['text'] },
        deployments: [{ id: 'dep', provider: 'sim', provider_model: 'gpt-4o-mini', price: { prompt_per_million: '1', completion_per_million: '2' } }],
      }],
    });
    const logger = silentLogger();
    // The spend guard is not what this test is about: it admits every call and ignores charges.
    const hold = { holdId: 'h', micros: 0, grant: false };
    const spend = { admit: async () => hold, reserve: async () => hold, release: () => undefined, giveBack: () => undefined } as unknown as SpendGrants;
    chat = new ChatService({
      models: new ModelDirectory(catalog), router: new DeploymentRouter(catalog, () => provider, { SIM_KEY: 'sk-sim' }, logger),
      spend, logger, archive: CallArchiver.off(logger),
      // Not started: job runs are not streams, so the journal is never written here.
      usage: new UsageRecorder(publisher, new OpenCallJournal({ store: t.store, publisher, logger, serviceName: 'inference', leaseMs: 15_000, checkpointMs: 1_000, sweepMs: 60_000 })),
    });
    jobs = chatJobStore(t.store);
    await jobs.ensureIndexes();
  });

  afterAll(async () => {
    await pool?.stop();
    await publisher.close();
    await outbox.close();
    await provider.close?.();
    await busStore.close();
    await rm(dir, { recursive: true, force: true });
    await t.dispose();
    await sim.close();
  });

  it('gets the first completion back from the provider instead of generating it again', async () => {
    const job = queuedJob({ payload: { request_json: JSON.stringify(BODY) } });
    // The worker that died had called the provider under the job's request_id, then crashed before writing
    // the outcome: the job is left in progress under its lapsed lease.
    const { completion: first } = await chat.complete(BODY, IDENTITY, 'trace', { requestId: job.payload.request_id, signal: new AbortController().signal });
    await insertJob(t.store, { ...job, status: 'in_progress', worker_id: 'dead-worker', lease_until_ms: Date.now() - 1, attempts: 1 });
    const control = queuedJob({ payload: { request_json: JSON.stringify(BODY) } });
    await insertJob(t.store, control);

    pool = new JobWorkerPool<ChatJobPayload, ChatJobResult>({
      jobs, logger: silentLogger(),
      handler: chatJobHandler({ chat, flushUsage: () => publisher.flush(), logger: silentLogger(), flushRetryMs: 50 }),
      workers: 1, leaseMs: 5_000, pollMs: 20, cancelCheckMs: 1_000, shutdownGraceMs: 0,
    });
    pool.start();
    await eventually(async () => (await jobs.get(job._id))?.status === 'completed' && (await jobs.get(control._id))?.status === 'completed', 15_000);

    const rerun = JSON.parse((await jobs.get(job._id))!.result!.completion_json);
    expect((await jobs.get(job._id))!.attempts).toBe(2);
    expect(rerun).toEqual(first);
    // A job with its own request_id is generated afresh: the simulator numbers each generation.
    expect(JSON.parse((await jobs.get(control._id))!.result!.completion_json).id).not.toBe(first.id);
  });
});
