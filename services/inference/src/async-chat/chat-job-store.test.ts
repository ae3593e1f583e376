import { ChatJobStore } from './chat-job-store';
import { completionFor, openTestStore, queuedJob, STORE_ENGINES, type TestStore } from './chat-job-test-support';

jest.setTimeout(30_000);

describe.each(STORE_ENGINES)('chat job store (%s)', (engine) => {
  let t: TestStore;
  let clock: number;
  let jobs: ChatJobStore;

  beforeEach(async () => {
    t = await openTestStore(engine);
    clock = Date.now();
    jobs = new ChatJobStore(t.store, () => clock);
    await jobs.ensureIndexes();
  });

  afterEach(async () => {
    await t.dispose();
  });

  async function insertJobs(count: number) {
    const docs = Array.from({ length: count }, (_, i) => queuedJob({ created_at_ms: clock + i }));
    for (const d of docs) await jobs.insert(d);
    return docs;
  }

  it('gives each job to exactly one of many parallel workers, oldest first', async () => {
    const docs = await insertJobs(6);
    const claimedBy = new Map<string, string[]>();
    const worker = async (w: string) => {
      for (let job = await jobs.claimNext(w, 30_000); job; job = await jobs.claimNext(w, 30_000)) {
        claimedBy.set(job._id, [...(claimedBy.get(job._id) ?? []), w]);
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => worker(`w${i}`)));
    expect([...claimedBy.keys()].sort()).toEqual(docs.map((d) => d._id).sort());
    for (const owners of claimedBy.values()) expect(owners).toHaveLength(1);
    for (const d of docs) {
      const stored = (await jobs.findById(d._id))!;
      expect(stored).toMatchObject({ status: 'in_progress', attempts: 1, worker_id: claimedBy.get(d._id)![0], lease_until_ms: clock + 30_000 });
      expect(stored.in_progress_at_ms).toBe(clock);
    }

    const fresh = new ChatJobStore(t.store, () => clock);
    const [oldest] = await insertJobs(2);
    expect((await fresh.claimNext('solo', 1_000))?._id).toBe(oldest._id);
  });

  it('re-claims a job whose lease lapsed, and the old worker can no longer write', async () => {
    const [doc] = await insertJobs(1);
    const first = await jobs.claimNext('w-old', 1_000);
    expect(first?._id).toBe(doc._id);
    expect(await jobs.claimNext('w-new', 1_000)).toBeNull();

    clock += 1_001;
    const second = await jobs.claimNext('w-new', 1_000);
    expect(second).toMatchObject({ _id: doc._id, worker_id: 'w-new', attempts: 2, in_progress_at_ms: clock - 1_001 });

    expect(await jobs.renewLease(doc._id, 'w-old', 1_000)).toBe(false);
    expect(await jobs.complete(doc._id, 'w-old', completionFor('old'))).toBe(false);
    expect(await jobs.fail(doc._id, 'w-old', { code: 'x', message: 'x' })).toBe(false);
    expect(await jobs.finishCancelled(doc._id, 'w-old')).toBe(false);
    expect(await jobs.renewLease(doc._id, 'w-new', 1_000)).toBe(true);
    expect(await jobs.complete(doc._id, 'w-new', completionFor('new'))).toBe(true);

    const done = (await jobs.findById(doc._id))!;
    expect(done).toMatchObject({ status: 'completed', completed_at_ms: clock, worker_id: 'w-new' });
    expect(JSON.parse(done.completion_json!).id).toBe('chatcmpl-new');
    // A finished job is never claimable and its outcome never rewritten.
    clock += 10_000;
    expect(await jobs.claimNext('w-late', 1_000)).toBeNull();
    expect(await jobs.fail(doc._id, 'w-new', { code: 'x', message: 'x' })).toBe(false);
  });

  it('a released job is claimable at once by another worker', async () => {
    const [doc] = await insertJobs(1);
    await jobs.claimNext('w1', 30_000);
    expect(await jobs.release(doc._id, 'w2')).toBe(false);
    expect(await jobs.release(doc._id, 'w1')).toBe(true);
    expect(await jobs.claimNext('w2', 30_000)).toMatchObject({ _id: doc._id, worker_id: 'w2', attempts: 2 });
  });

  it('cancels a queued job at once, flags a running one, and leaves a terminal one unchanged', async () => {
    const [queued, running, finished] = await insertJobs(3);

    const cancelledQueued = await jobs.cancel(queued._id, queued.account_id);
    expect(cancelledQueued).toMatchObject({ status: 'cancelled', cancelled_at_ms: clock, cancel_requested_at_ms: clock });

    // Claims take the oldest claimable: `running`, then `finished`.
    expect((await jobs.claimNext('w1', 30_000))?._id).toBe(running._id);
    expect((await jobs.claimNext('w2', 30_000))?._id).toBe(finished._id);
    await jobs.complete(finished._id, 'w2', completionFor('f'));

    const flagged = await jobs.cancel(running._id, running.account_id);
    expect(flagged).toMatchObject({ status: 'in_progress', cancel_requested_at_ms: clock, worker_id: 'w1' });
    clock += 5;
    expect((await jobs.cancel(running._id, running.account_id))?.cancel_requested_at_ms).toBe(clock - 5);
    expect(await jobs.finishCancelled(running._id, 'w1')).toBe(true);
    expect(await jobs.findById(running._id)).toMatchObject({ status: 'cancelled', cancelled_at_ms: clock });

    const before = await jobs.findById(finished._id);
    expect(await jobs.cancel(finished._id, finished.account_id)).toEqual(before);
    expect(await jobs.cancel(running._id, running.account_id)).toMatchObject({ status: 'cancelled' });

    expect(await jobs.cancel(queued._id, 'acct_other')).toBeNull();
    expect(await jobs.cancel('chatjob_unknown', queued.account_id)).toBeNull();
  });

  it('expires queued jobs past their estimate and never touches running ones', async () => {
    const stale = queuedJob({ expires_at_ms: clock - 1 });
    const staleRunning = queuedJob({ expires_at_ms: clock + 100 });
    const fresh = queuedJob({ expires_at_ms: clock + 60_000 });
    for (const d of [stale, staleRunning, fresh]) await jobs.insert(d);

    // The stale job is not started even before the sweeper gets to it.
    expect((await jobs.claimNext('w1', 60_000))?._id).toBe(staleRunning._id);
    clock += 1_000;
    expect(await jobs.expireQueued()).toBe(1);
    expect(await jobs.findById(stale._id)).toMatchObject({ status: 'expired', expired_at_ms: clock });
    expect(await jobs.findById(staleRunning._id)).toMatchObject({ status: 'in_progress' });
    expect(await jobs.findById(fresh._id)).toMatchObject({ status: 'queued' });
    expect(await jobs.expireQueued()).toBe(0);
    expect(await jobs.cancel(stale._id, stale.account_id)).toMatchObject({ status: 'expired' });
  });

  it('finds a job only for its own account', async () => {
    const [doc] = await insertJobs(1);
    expect(await jobs.findForAccount(doc._id, doc.account_id)).toMatchObject({ _id: doc._id });
    expect(await jobs.findForAccount(doc._id, 'acct_other')).toBeNull();
  });
});
