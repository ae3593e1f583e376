import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { GatewayError, toGatewayError, type Logger } from '@gw/platform';
import { interruptReason, JobInterrupted, type InterruptReason, type JobDoc, type JobError } from './job';
import type { JobStore } from './job-store';

/** What a handler gets for one run of one claimed job. */
export interface JobRun<P, R> {
  job: JobDoc<P, R>;
  workerId: string;
  /** Aborted with a `JobInterrupted` reason on a cancel, a lost lease or shutdown; pass it to abortable work. */
  signal: AbortSignal;
  /**
   * Looks at the job in the store between steps: throws `JobInterrupted` when a cancel was asked for or the
   * lease was lost (also when the signal already fired), so no further step starts.
   */
  checkpoint(): Promise<void>;
}

/**
 * Runs one job; its return value is the job's result. A throw fails the job with `describeError(err)`,
 * unless the run was interrupted: then the job ends cancelled, is handed back, or is left to its new owner.
 */
export type JobHandler<P, R> = (run: JobRun<P, R>) => Promise<R>;

export interface JobWorkerPoolOptions<P, R> {
  jobs: JobStore<P, R>;
  handler: JobHandler<P, R>;
  logger: Logger;
  /** Concurrent jobs in this pool; 0 runs none. */
  workers: number;
  leaseMs: number;
  /** Idle wait between claim attempts; `wake()` (a local enqueue) ends it earlier. */
  pollMs: number;
  /** How often a running job is looked at for a cancel flag set elsewhere or a lost lease. */
  cancelCheckMs: number;
  /** On stop, in-flight jobs get this long to finish before they are aborted and handed back. */
  shutdownGraceMs: number;
  /** Claims of one job after which it is failed instead of run again (a job that keeps killing workers). */
  maxAttempts?: number;
  /** The `{code, message}` a failed job shows; default: the typed error's code and message. */
  describeError?: (err: unknown) => JobError;
}

interface RunningJob {
  controller: AbortController;
  done: Promise<void>;
}

/** Aborts a job's work once, with the first reason given. */
function interrupt(controller: AbortController, reason: InterruptReason): void {
  if (!controller.signal.aborted) controller.abort(new JobInterrupted(reason));
}

/**
 * Workers for one job kind: each loops claim -> run -> claim. When nothing is claimable, one idle worker
 * polls (claims again every `pollMs`) and the other idle workers park until work shows up, so an idle pool
 * asks the store once per interval rather than once per worker (media's 32 video workers made 32 queries a
 * second on an idle store).
 * They hold no state a restart would lose: everything is on the job document and its lease, so any number
 * of pools in any number of processes may work the same jobs.
 */
export class JobWorkerPool<P, R> {
  private readonly running = new Map<string, RunningJob>();
  private readonly loops: Promise<void>[] = [];
  private sleepers: (() => void)[] = [];
  /** An idle worker is polling for the pool; the other idle workers are parked. */
  private polling = false;
  private parked: (() => void)[] = [];
  private stopping = false;
  private readonly poolId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly log: Logger;
  private readonly describeError: (err: unknown) => JobError;

  constructor(private readonly opts: JobWorkerPoolOptions<P, R>) {
    this.log = opts.logger.child({ component: 'job-workers', kind: opts.jobs.kind });
    this.describeError = opts.describeError ?? describeTypedError;
  }

  start(): void {
    for (let i = 0; i < this.opts.workers; i++) this.loops.push(this.loop(`${this.poolId}-w${i}`));
  }

  /** A job was enqueued here: the polling worker stops waiting, and one parked worker claims too (the poller may be mid-claim). */
  wake(): void {
    const sleepers = this.sleepers;
    this.sleepers = [];
    for (const wake of sleepers) wake();
    this.unparkOne();
  }

  /** Aborts the job at once if this pool is running it (call after setting the cancel flag). */
  cancelLocal(jobId: string): void {
    const job = this.running.get(jobId);
    if (job) interrupt(job.controller, 'cancelled');
  }

  /** Stops claiming, lets in-flight jobs finish for the grace period, then aborts them and releases their leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    for (const unpark of this.parked.splice(0)) unpark();
    const inFlight = [...this.running.values()].map((j) => j.done);
    if (inFlight.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((r) => { timer = setTimeout(r, this.opts.shutdownGraceMs); });
      await Promise.race([Promise.all(inFlight), grace]);
      clearTimeout(timer);
    }
    for (const job of this.running.values()) interrupt(job.controller, 'shutdown');
    await Promise.all(this.loops);
  }

  private async loop(workerId: string): Promise<void> {
    while (!this.stopping) {
      let claimed: JobDoc<P, R> | null = null;
      try {
        claimed = await this.opts.jobs.claim(workerId, this.opts.leaseMs);
      } catch (err) {
        this.log.warn({ err, workerId }, 'claiming a job failed; retrying after the poll interval');
      }
      if (!claimed) {
        await this.idle();
        continue;
      }
      // There is work: one more idle worker tries, and so on while claims succeed.
      this.unparkOne();
      const job = claimed;
      if (this.stopping) {
        // Claimed while stop() was already handing jobs back: hand this one back too.
        await this.opts.jobs.release(job._id, workerId).catch(() => undefined);
        break;
      }
      const controller = new AbortController();
      const done = this.run(job, workerId, controller).catch((err: unknown) => {
        // The outcome write failed (store down): the lease lapses and another worker re-runs the job.
        this.log.error({ err, jobId: job._id, workerId }, 'job outcome not recorded; it will be re-run');
      });
      this.running.set(job._id, { controller, done });
      try {
        await done;
      } finally {
        this.running.delete(job._id);
      }
    }
  }

  /** Runs one claimed job to an outcome written under this worker's lease. */
  private async run(job: JobDoc<P, R>, workerId: string, controller: AbortController): Promise<void> {
    const { jobs } = this.opts;
    const log = this.log.child({ jobId: job._id, workerId, attempt: job.attempts });
    if (job.cancel_requested_at_ms !== undefined) {
      await jobs.finishCancelled(job._id, workerId);
      return;
    }
    const maxAttempts = this.opts.maxAttempts ?? 5;
    if (job.attempts > maxAttempts) {
      log.error('job keeps losing its worker; giving up');
      await jobs.fail(job._id, workerId, { code: 'too_many_attempts', message: `The job was started ${maxAttempts} times without finishing` });
      return;
    }
    const checkpoint = async () => {
      if (!controller.signal.aborted) {
        const state = await jobs.checkLease(job._id, workerId);
        if (state === 'cancel_requested') interrupt(controller, 'cancelled');
        else if (state === 'lost') interrupt(controller, 'lease_lost');
      }
      if (controller.signal.aborted) throw controller.signal.reason;
    };
    const stopWatching = this.watch(job._id, workerId, controller, log);
    try {
      let result: R;
      try {
        result = await this.opts.handler({ job, workerId, signal: controller.signal, checkpoint });
      } catch (err) {
        await this.stopped(job._id, workerId, controller.signal, err, log);
        return;
      }
      if (!(await jobs.complete(job._id, workerId, result))) log.warn('lease lost before the result was written; the new owner finishes the job');
    } finally {
      stopWatching();
    }
  }

  private async stopped(jobId: string, workerId: string, signal: AbortSignal, err: unknown, log: Logger): Promise<void> {
    switch (interruptReason(signal)) {
      case 'cancelled':
        await this.opts.jobs.finishCancelled(jobId, workerId);
        return;
      case 'shutdown':
        await this.opts.jobs.release(jobId, workerId);
        return;
      case 'lease_lost':
        log.warn('lease lost while working; the new owner finishes the job');
        return;
      default:
        if (!(err instanceof GatewayError)) log.error({ err }, 'job failed unexpectedly');
        await this.opts.jobs.fail(jobId, workerId, this.describeError(err));
    }
  }

  /**
   * While a job runs: renew its lease (a third of its length), and look at it for a cancel flag or a lost
   * lease (a cancel may arrive at another instance). Either aborts the run's signal.
   */
  private watch(jobId: string, workerId: string, controller: AbortController, log: Logger): () => void {
    const { jobs, leaseMs } = this.opts;
    const stopRenewing = every(Math.max(10, Math.floor(leaseMs / 3)), async () => {
      if (!(await jobs.renew(jobId, workerId, leaseMs))) interrupt(controller, 'lease_lost');
    }, log);
    const stopChecking = every(this.opts.cancelCheckMs, async () => {
      const state = await jobs.checkLease(jobId, workerId);
      if (state === 'lost') interrupt(controller, 'lease_lost');
      else if (state === 'cancel_requested') interrupt(controller, 'cancelled');
    }, log);
    return () => {
      stopRenewing();
      stopChecking();
    };
  }

  /** Nothing to claim: poll after the interval if no other worker does, else park until work shows up. */
  private async idle(): Promise<void> {
    if (this.stopping) return;
    if (this.polling) {
      await new Promise<void>((resolve) => this.parked.push(resolve));
      return;
    }
    this.polling = true;
    try {
      await this.sleep();
    } finally {
      this.polling = false;
    }
  }

  private unparkOne(): void {
    this.parked.shift()?.();
  }

  private sleep(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleepers = this.sleepers.filter((s) => s !== wake);
        resolve();
      }, this.opts.pollMs);
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      this.sleepers.push(wake);
    });
  }
}

function describeTypedError(err: unknown): JobError {
  const e = toGatewayError(err);
  return { code: e.code, message: e.message };
}

/** Runs `task` every `ms`, never overlapping itself; a store hiccup is logged, not fatal. */
function every(ms: number, task: () => Promise<void>, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      await task();
    } catch (err) {
      log.warn({ err }, 'job watch failed; retrying');
    }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
