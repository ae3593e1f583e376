import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from '@gw/platform';
import type { ChatJobStore } from './chat-job-store';
import { interrupt, runClaimedJob, type ChatCompleter } from './chat-job-runner';

export interface ChatJobWorkerOptions {
  jobs: ChatJobStore;
  chat: ChatCompleter;
  flushUsage: () => Promise<void>;
  logger: Logger;
  /** Concurrent jobs in this instance; 0 starts none. */
  workers: number;
  leaseMs: number;
  /** Idle wait between claim attempts; a submit in this process wakes the workers earlier. */
  pollMs: number;
  cancelCheckMs: number;
  /** On stop, in-flight jobs get this long to finish before they are aborted and handed back. */
  shutdownGraceMs: number;
  /** Claims of one job after which it is failed instead of run again (a job that keeps killing workers). */
  maxAttempts?: number;
}

interface RunningJob {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * This instance's job workers: each loops claim -> run -> claim, and sleeps `pollMs` when nothing is
 * claimable. They hold no state a restart would lose: everything is on the job document and its lease.
 */
export class ChatJobWorkerPool {
  private readonly running = new Map<string, RunningJob>();
  private readonly loops: Promise<void>[] = [];
  private sleepers: (() => void)[] = [];
  private stopping = false;
  private readonly instanceId = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly log: Logger;

  constructor(private readonly opts: ChatJobWorkerOptions) {
    this.log = opts.logger.child({ component: 'chat-job-workers' });
  }

  start(): void {
    for (let i = 0; i < this.opts.workers; i++) this.loops.push(this.loop(`${this.instanceId}-w${i}`));
  }

  /** A job was submitted here: stop waiting for the next poll. */
  wake(): void {
    const sleepers = this.sleepers;
    this.sleepers = [];
    for (const wake of sleepers) wake();
  }

  /** Aborts the job at once if one of this instance's workers is running it (the cancel flag is already set). */
  cancelLocal(jobId: string): void {
    const job = this.running.get(jobId);
    if (job) interrupt(job.controller, 'cancelled');
  }

  /** Stops claiming, lets in-flight jobs finish for the grace period, then aborts them and releases their leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
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
    const ctx = {
      jobs: this.opts.jobs, chat: this.opts.chat, flushUsage: this.opts.flushUsage, logger: this.log,
      leaseMs: this.opts.leaseMs, cancelCheckMs: this.opts.cancelCheckMs, maxAttempts: this.opts.maxAttempts ?? 5,
    };
    while (!this.stopping) {
      let claimed = null;
      try {
        claimed = await this.opts.jobs.claimNext(workerId, this.opts.leaseMs);
      } catch (err) {
        this.log.warn({ err, workerId }, 'claiming a chat job failed; retrying after the poll interval');
      }
      if (!claimed) {
        await this.sleep();
        continue;
      }
      if (this.stopping) {
        // Claimed while stop() was already handing jobs back: hand this one back too.
        await this.opts.jobs.release(claimed._id, workerId).catch(() => undefined);
        break;
      }
      const controller = new AbortController();
      const done = runClaimedJob(claimed, workerId, ctx, controller).catch((err: unknown) => {
        // The outcome write failed (store down): the lease lapses and another worker re-runs the job.
        this.log.error({ err, jobId: claimed._id, workerId }, 'chat job outcome not recorded; it will be re-run');
      });
      this.running.set(claimed._id, { controller, done });
      try {
        await done;
      } finally {
        this.running.delete(claimed._id);
      }
    }
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
