import { DuplicateKeyError, type Collection, type Filter, type Store } from '@gw/store';
import { isTerminal, type JobDoc, type JobError } from './job';

/** The collection every kind of job lives in; workers claim by `kind`. */
export const JOBS_COLLECTION = 'jobs';

/** Candidates read per claim attempt; racing workers that lose one candidate move on to the next. */
const CLAIM_PAGE = 10;
/** A cancel that keeps losing races with workers gives up after this many rounds and reports the job as it is. */
const CANCEL_ROUNDS = 5;

export interface JobStoreOptions {
  store: Store;
  /** The kind of job this store enqueues and claims (`chat.completion`, `batch.line`, ...). */
  kind: string;
  clock?: () => number;
}

export interface EnqueueRequest<P> {
  /** Chosen by the caller, so a retried enqueue finds the job it already made instead of making another. */
  id: string;
  payload: P;
  ownerId?: string | null;
  expiresAtMs: number;
}

/** What a worker finds when it looks at the job it is running. */
export type LeaseCheck = 'held' | 'cancel_requested' | 'lost';

/**
 * Leased jobs of one kind on the store port. Every state change is one guarded single-document write:
 * claims go through find-one-and-update, and a worker's writes name its `worker_id` and `in_progress`, so a
 * worker whose lease was taken over cannot renew it or overwrite the new owner's outcome.
 */
export class JobStore<P, R> {
  readonly kind: string;
  private readonly jobs: Collection<JobDoc<P, R>>;
  private readonly now: () => number;

  constructor(opts: JobStoreOptions) {
    this.kind = opts.kind;
    this.jobs = opts.store.collection<JobDoc<P, R>>(JOBS_COLLECTION);
    this.now = opts.clock ?? Date.now;
  }

  async ensureIndexes(): Promise<void> {
    await this.jobs.ensureIndex({ fields: { kind: 1, status: 1, created_at_ms: 1 } });
    await this.jobs.ensureIndex({ fields: { owner_id: 1, created_at_ms: -1 } });
  }

  /** Queues a job; the same id enqueued again returns the first job unchanged (`created: false`). */
  async enqueue(req: EnqueueRequest<P>): Promise<{ job: JobDoc<P, R>; created: boolean }> {
    const job: JobDoc<P, R> = {
      _id: req.id,
      kind: this.kind,
      status: 'queued',
      owner_id: req.ownerId ?? null,
      payload: req.payload,
      created_at_ms: this.now(),
      expires_at_ms: req.expiresAtMs,
      worker_id: null,
      lease_until_ms: 0,
      attempts: 0,
    };
    try {
      await this.jobs.insertOne(job);
      return { job, created: true };
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      const existing = await this.get(req.id);
      if (!existing) throw err;
      return { job: existing, created: false };
    }
  }

  /** Queue depth and the age of the oldest queued job (the operator's view; read on a metrics scrape). */
  async queueStats(): Promise<{ queued: number; inProgress: number; oldestQueuedAgeMs: number }> {
    const [queued, inProgress, oldest] = await Promise.all([
      this.jobs.count({ kind: this.kind, status: 'queued' }),
      this.jobs.count({ kind: this.kind, status: 'in_progress' }),
      this.jobs.findOne({ kind: this.kind, status: 'queued' }, { sort: { created_at_ms: 1 } }),
    ]);
    return { queued, inProgress, oldestQueuedAgeMs: oldest ? Math.max(0, this.now() - oldest.created_at_ms) : 0 };
  }

  get(id: string): Promise<JobDoc<P, R> | null> {
    return this.jobs.findOne({ _id: id, kind: this.kind });
  }

  /** Null for another owner's job: it is indistinguishable from a missing one. */
  getForOwner(id: string, ownerId: string): Promise<JobDoc<P, R> | null> {
    return this.jobs.findOne({ _id: id, kind: this.kind, owner_id: ownerId });
  }

  /**
   * Takes the oldest claimable job: `queued` and not past its expiry, or `in_progress` whose lease lapsed
   * (its worker died or stalled). Returns it as claimed (attempts counted), or null when there is none.
   */
  async claim(workerId: string, leaseMs: number): Promise<JobDoc<P, R> | null> {
    const claimableAt = (now: number): Filter => ({
      kind: this.kind,
      $or: [
        { status: 'queued', expires_at_ms: { $gte: now } },
        { status: 'in_progress', lease_until_ms: { $lt: now } },
      ],
    });
    const candidates = await this.jobs.find(claimableAt(this.now()), { sort: { created_at_ms: 1 }, limit: CLAIM_PAGE });
    for (const candidate of candidates) {
      // The clock is read again for each claiming write: a slow read before it must not shorten the lease.
      const now = this.now();
      const claimed = await this.jobs.findOneAndUpdate(
        { ...claimableAt(now), _id: candidate._id },
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
  async renew(id: string, workerId: string, leaseMs: number): Promise<boolean> {
    return this.writeOwned(id, workerId, { lease_until_ms: this.now() + leaseMs });
  }

  /** Whether this worker still holds the job, and whether a cancel was asked for meanwhile. */
  async checkLease(id: string, workerId: string): Promise<LeaseCheck> {
    const current = await this.get(id);
    if (!current || current.worker_id !== workerId || current.status !== 'in_progress') return 'lost';
    return current.cancel_requested_at_ms === undefined ? 'held' : 'cancel_requested';
  }

  complete(id: string, workerId: string, result: R): Promise<boolean> {
    return this.writeOwned(id, workerId, { status: 'completed', completed_at_ms: this.now(), result, lease_until_ms: 0 });
  }

  fail(id: string, workerId: string, error: JobError): Promise<boolean> {
    return this.writeOwned(id, workerId, { status: 'failed', failed_at_ms: this.now(), error, lease_until_ms: 0 });
  }

  /** The worker stopped on a cancel request. */
  finishCancelled(id: string, workerId: string): Promise<boolean> {
    return this.writeOwned(id, workerId, { status: 'cancelled', cancelled_at_ms: this.now(), lease_until_ms: 0 });
  }

  /** Gives the job back (graceful shutdown): another worker may claim it at once. */
  release(id: string, workerId: string): Promise<boolean> {
    return this.writeOwned(id, workerId, { lease_until_ms: 0, worker_id: null });
  }

  /**
   * Asks for a job to stop: a queued job becomes `cancelled` at once; an in-progress job gets a cancel flag
   * its worker honours; a terminal job is returned unchanged. Null when there is no such job (for the owner).
   */
  async cancel(id: string, ownerId?: string): Promise<JobDoc<P, R> | null> {
    const find = () => (ownerId === undefined ? this.get(id) : this.getForOwner(id, ownerId));
    for (let round = 0; round < CANCEL_ROUNDS; round++) {
      const job = await find();
      if (!job || isTerminal(job.status)) return job;
      const now = this.now();
      const updated = job.status === 'queued'
        ? await this.jobs.findOneAndUpdate({ _id: id, status: 'queued' }, { $set: { status: 'cancelled', cancelled_at_ms: now, cancel_requested_at_ms: now } })
        : await this.jobs.findOneAndUpdate({ _id: id, status: 'in_progress' }, { $min: { cancel_requested_at_ms: now } });
      // Null: a worker claimed or finished it in between; look again.
      if (updated) return updated;
    }
    return find();
  }

  /** Marks queued jobs past their expiry `expired`; jobs already running are never touched. */
  async expireQueued(): Promise<number> {
    const now = this.now();
    const r = await this.jobs.updateMany(
      { kind: this.kind, status: 'queued', expires_at_ms: { $lt: now } },
      { $set: { status: 'expired', expired_at_ms: now } },
    );
    return r.modified;
  }

  private async writeOwned(id: string, workerId: string, set: Record<string, unknown>): Promise<boolean> {
    const r = await this.jobs.updateOne({ _id: id, kind: this.kind, worker_id: workerId, status: 'in_progress' }, { $set: set });
    return r.matched === 1;
  }
}
