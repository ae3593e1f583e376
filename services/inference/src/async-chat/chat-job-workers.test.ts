import { UpstreamError } from '@gw/platform';
import { JobWorkerPool, JOBS_COLLECTION } from '@gw/jobs';
import { chatJobStore, type ChatJobPayload, type ChatJobResult, type ChatJobStore } from './chat-job';
import { chatJobHandler } from './chat-job-runner';
import { eventually, FakeChat, insertJob, openTestStore, queuedJob, silentLogger, type TestStore } from './chat-job-test-support';

type ChatJobWorkerPool = JobWorkerPool<ChatJobPayload, ChatJobResult>;

interface PoolOptions {
  flushUsage: () => Promise<void>;
  workers: number;
  leaseMs: number;
  pollMs: number;
  cancelCheckMs: number;
  shutdownGraceMs: number;
  maxAttempts: number;
}

describe('chat job workers', () => {
  let t: TestStore;
  let jobs: ChatJobStore;
  let chat: FakeChat;
  let pools: ChatJobWorkerPool[];
  let flushes: number;

  beforeEach(async () => {
    t = await openTestStore('embedded');
    jobs = chatJobStore(t.store);
    await jobs.ensureIndexes();
    chat = new FakeChat();
    pools = [];
    flushes = 0;
  });

  afterEach(async () => {
    await Promise.all(pools.map((p) => p.stop()));
    await t.dispose();
  });

  /** This instance's chat job workers, as the service wires them. */
  function startPool(overrides: Partial<PoolOptions> = {}): ChatJobWorkerPool {
    const { flushUsage, ...options }: PoolOptions = {
      flushUsage: async () => { flushes++; },
      workers: 2, leaseMs: 1_000, pollMs: 20, cancelCheckMs: 20, shutdownGraceMs: 0, maxAttempts: 5,
      ...overrides,
    };
    const pool = new JobWorkerPool<ChatJobPayload, ChatJobResult>({
      jobs, logger: silentLogger(), ...options,
      handler: chatJobHandler({ chat, flushUsage, logger: silentLogger(), flushRetryMs: 20 }),
    });
    pools.push(pool);
    pool.start();
    return pool;
  }

  const statusOf = async (id: string) => (await jobs.get(id))?.status;

  it('runs a job under its request_id and makes the usage durable before saying completed', async () => {
    const doc = queuedJob();
    await insertJob(t.store, doc);
    let statusAtFlush: string | undefined;
    startPool({ flushUsage: async () => { statusAtFlush = await statusOf(doc._id); } });

    await eventually(async () => (await statusOf(doc._id)) === 'completed');
    expect(statusAtFlush).toBe('in_progress');
    expect(chat.billed).toEqual([doc.payload.request_id]);
    const done = (await jobs.get(doc._id))!;
    expect(JSON.parse(done.result!.completion_json)).toMatchObject({ id: `chatcmpl-${doc.payload.request_id}`, object: 'chat.completion' });
    expect(done.attempts).toBe(1);
  });

  it('a submit wakes idle workers without waiting for the poll interval', async () => {
    const pool = startPool({ pollMs: 60_000 });
    await new Promise((r) => setTimeout(r, 50));
    const doc = queuedJob();
    await insertJob(t.store, doc);
    pool.wake();
    await eventually(async () => (await statusOf(doc._id)) === 'completed', 2_000);
  });

  it('runs nothing with zero workers', async () => {
    startPool({ workers: 0 });
    const doc = queuedJob();
    await insertJob(t.store, doc);
    await new Promise((r) => setTimeout(r, 100));
    expect(await statusOf(doc._id)).toBe('queued');
  });

  it('cancelling a running job aborts the upstream call, ends cancelled, and bills nothing', async () => {
    chat.latencyMs = 10_000;
    const doc = queuedJob();
    await insertJob(t.store, doc);
    const pool = startPool({ cancelCheckMs: 60_000 });
    await eventually(() => chat.started.length === 1);

    await jobs.cancel(doc._id, doc.owner_id!);
    pool.cancelLocal(doc._id);
    await eventually(async () => (await statusOf(doc._id)) === 'cancelled', 2_000);
    expect(chat.signals[0].aborted).toBe(true);
    expect(chat.billed).toEqual([]);
    expect(flushes).toBe(0);
  });

  it('a cancel made through another instance is noticed by the running worker', async () => {
    chat.latencyMs = 10_000;
    const doc = queuedJob();
    await insertJob(t.store, doc);
    startPool();
    await eventually(() => chat.started.length === 1);
    await jobs.cancel(doc._id, doc.owner_id!);
    await eventually(async () => (await statusOf(doc._id)) === 'cancelled', 2_000);
    expect(chat.billed).toEqual([]);
  });

  it('a job whose worker died is re-run by another one under the same request_id', async () => {
    const doc = queuedJob();
    await insertJob(t.store, doc);
    // A worker that claimed it and died without a word (its lease simply lapses).
    expect(await jobs.claim('dead-worker', 100)).toMatchObject({ _id: doc._id });
    startPool({ leaseMs: 1_000 });
    await eventually(async () => (await statusOf(doc._id)) === 'completed', 3_000);
    const done = (await jobs.get(doc._id))!;
    expect(done.attempts).toBe(2);
    expect(done.worker_id).not.toBe('dead-worker');
    expect(chat.billed).toEqual([doc.payload.request_id]);
  });

  it('a claimed job with a cancel flag (its worker died) ends cancelled without a call', async () => {
    const doc = queuedJob();
    await insertJob(t.store, doc);
    await jobs.claim('dead-worker', 50);
    await jobs.cancel(doc._id, doc.owner_id!);
    startPool();
    await eventually(async () => (await statusOf(doc._id)) === 'cancelled', 3_000);
    expect(chat.started).toEqual([]);
  });

  it('a worker that lost its lease stops and never writes an outcome', async () => {
    chat.latencyMs = 10_000;
    const doc = queuedJob();
    await insertJob(t.store, doc);
    startPool({ workers: 1 });
    await eventually(() => chat.started.length === 1);
    // Another worker took it over (the lease had lapsed during a stall).
    const stolen = await t.store.collection(JOBS_COLLECTION).updateOne({ _id: doc._id }, { $set: { worker_id: 'thief', lease_until_ms: Date.now() + 60_000 } });
    expect(stolen.modified).toBe(1);
    await eventually(() => chat.signals[0].aborted, 2_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(await jobs.get(doc._id)).toMatchObject({ status: 'in_progress', worker_id: 'thief' });
    expect(chat.billed).toEqual([]);
  });

  it('a provider failure fails the job with the typed error code and message', async () => {
    chat.failWith = new UpstreamError('The provider failed (HTTP 503)', 503);
    const doc = queuedJob();
    await insertJob(t.store, doc);
    startPool();
    await eventually(async () => (await statusOf(doc._id)) === 'failed');
    expect((await jobs.get(doc._id))!.error).toEqual({ code: 'upstream_error', message: 'The provider failed (HTTP 503)' });
  });

  it('a job that keeps losing its workers is failed instead of run again', async () => {
    const doc = queuedJob({ attempts: 5 });
    await insertJob(t.store, doc);
    startPool({ maxAttempts: 5 });
    await eventually(async () => (await statusOf(doc._id)) === 'failed');
    expect((await jobs.get(doc._id))!.error?.code).toBe('too_many_attempts');
    expect(chat.started).toEqual([]);
  });

  it('shutdown hands a running job back at once, unbilled, for another instance to take', async () => {
    chat.latencyMs = 10_000;
    const doc = queuedJob();
    await insertJob(t.store, doc);
    const pool = startPool({ shutdownGraceMs: 50 });
    await eventually(() => chat.started.length === 1);
    await pool.stop();
    expect(await jobs.get(doc._id)).toMatchObject({ status: 'in_progress', worker_id: null, lease_until_ms: 0 });
    expect(chat.billed).toEqual([]);

    chat.latencyMs = 0;
    startPool();
    await eventually(async () => (await statusOf(doc._id)) === 'completed');
    expect(chat.billed).toEqual([doc.payload.request_id]);
  });

  it('shutdown lets a job finishing within the grace period complete', async () => {
    chat.latencyMs = 150;
    const doc = queuedJob();
    await insertJob(t.store, doc);
    const pool = startPool({ shutdownGraceMs: 5_000 });
    await eventually(() => chat.started.length === 1);
    await pool.stop();
    expect(await statusOf(doc._id)).toBe('completed');
    expect(chat.billed).toEqual([doc.payload.request_id]);
  });
});
