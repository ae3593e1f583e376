import type { ChatCompletion } from '@gw/provider-spec';
import type { Collection, Filter, Store } from '@gw/store';
import { CHAT_JOBS_COLLECTION, isTerminal, type ChatJobDoc } from './chat-job';

/** Candidates read per claim attempt; racing workers that lose one candidate move on to the next. */
const CLAIM_PAGE = 10;
/** A cancel that keeps losing races with workers gives up after this many rounds and reports the job as it is. */
const CANCEL_ROUNDS = 5;

/**
 * The `chat_jobs` collection. Every state change is one guarded single-document write: claims go through
 * find-one-and-update, and a worker's writes name its `worker_id` and `in_progress`, so a worker whose
 * lease was taken over cannot overwrite the new owner's outcome.
 */
export class ChatJobStore {
  private readonly jobs: Collection<ChatJobDoc>;

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.jobs = store.collection<ChatJobDoc>(CHAT_JOBS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.jobs.ensureIndex({ fields: { status: 1, created_at_ms: 1 } });
    await this.jobs.ensureIndex({ fields: { account_id: 1, created_at_ms: -1 } });
  }

  async insert(doc: ChatJobDoc): Promise<void> {
    await this.jobs.insertOne(doc);
  }

  findById(id: string): Promise<ChatJobDoc | null> {
    return this.jobs.findOne({ _id: id });
  }

  findForAccount(id: string, accountId: string): Promise<ChatJobDoc | null> {
    return this.jobs.findOne({ _id: id, account_id: accountId });
  }

  /**
   * Takes the oldest claimable job: `queued` (not past its expiry estimate), or `in_progress` whose lease
   * lapsed (its worker died or stalled). Returns it as claimed, or null when there is none.
   */
  async claimNext(workerId: string, leaseMs: number): Promise<ChatJobDoc | null> {
    const now = this.now();
    const claimable: Filter = {
      $or: [
        { status: 'queued', expires_at_ms: { $gte: now } },
        { status: 'in_progress', lease_until_ms: { $lt: now } },
      ],
    };
    const candidates = await this.jobs.find(claimable, { sort: { created_at_ms: 1 }, limit: CLAIM_PAGE });
    for (const candidate of candidates) {
      const claimed = await this.jobs.findOneAndUpdate(
        { _id: candidate._id, ...claimable },
        {
          $set: { status: 'in_progress', worker_id: workerId, lease_until_ms: now + leaseMs },
          $inc: { attempts: 1 },
          $min: { in_progress_at_ms: now },
        },
      );
      if (claimed) return claimed;
    }
    return null;
  }

  /** False when the lease is no longer this worker's (taken over, or the job left `in_progress`). */
  async renewLease(id: string, workerId: string, leaseMs: number): Promise<boolean> {
    const r = await this.jobs.updateOne(this.owned(id, workerId), { $set: { lease_until_ms: this.now() + leaseMs } });
    return r.matched === 1;
  }

  async complete(id: string, workerId: string, completion: ChatCompletion): Promise<boolean> {
    const r = await this.jobs.updateOne(this.owned(id, workerId), {
      $set: { status: 'completed', completed_at_ms: this.now(), completion_json: JSON.stringify(completion), lease_until_ms: 0 },
    });
    return r.matched === 1;
  }

  async fail(id: string, workerId: string, error: { code: string; message: string }): Promise<boolean> {
    const r = await this.jobs.updateOne(this.owned(id, workerId), {
      $set: { status: 'failed', failed_at_ms: this.now(), error, lease_until_ms: 0 },
    });
    return r.matched === 1;
  }

  /** The worker stopped on a cancel request. */
  async finishCancelled(id: string, workerId: string): Promise<boolean> {
    const r = await this.jobs.updateOne(this.owned(id, workerId), {
      $set: { status: 'cancelled', cancelled_at_ms: this.now(), lease_until_ms: 0 },
    });
    return r.matched === 1;
  }

  /** Gives the job back (graceful shutdown): another worker may claim it at once. */
  async release(id: string, workerId: string): Promise<boolean> {
    const r = await this.jobs.updateOne(this.owned(id, workerId), { $set: { lease_until_ms: 0, worker_id: null } });
    return r.matched === 1;
  }

  /**
   * Cancels the caller's job: a queued job becomes `cancelled` at once; an in-progress job gets a cancel
   * flag its worker honours; a terminal job is returned unchanged. Null when the account has no such job.
   */
  async cancel(id: string, accountId: string): Promise<ChatJobDoc | null> {
    for (let round = 0; round < CANCEL_ROUNDS; round++) {
      const job = await this.findForAccount(id, accountId);
      if (!job || isTerminal(job.status)) return job;
      const now = this.now();
      const updated = job.status === 'queued'
        ? await this.jobs.findOneAndUpdate({ _id: id, status: 'queued' }, { $set: { status: 'cancelled', cancelled_at_ms: now, cancel_requested_at_ms: now } })
        : await this.jobs.findOneAndUpdate({ _id: id, status: 'in_progress' }, { $min: { cancel_requested_at_ms: now } });
      // Null: a worker claimed or finished it in between; look again.
      if (updated) return updated;
    }
    return this.findForAccount(id, accountId);
  }

  /** Marks queued jobs past their expiry estimate `expired`; jobs already running are never touched. */
  async expireQueued(): Promise<number> {
    const now = this.now();
    const r = await this.jobs.updateMany(
      { status: 'queued', expires_at_ms: { $lt: now } },
      { $set: { status: 'expired', expired_at_ms: now } },
    );
    return r.modified;
  }

  private owned(id: string, workerId: string): Filter {
    return { _id: id, worker_id: workerId, status: 'in_progress' };
  }
}
