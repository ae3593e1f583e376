import type { Doc } from '@gw/store';

export type JobStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'expired';

const TERMINAL: ReadonlySet<JobStatus> = new Set(['completed', 'failed', 'cancelled', 'expired']);
export const isTerminal = (status: JobStatus) => TERMINAL.has(status);

export interface JobError {
  code: string;
  message: string;
}

/**
 * A durable leased job. Times are epoch milliseconds. `payload` and `result` are stored as documents, so
 * they must be storable as such: free-form JSON that may hold `$`-prefixed or dotted keys goes in as text.
 */
export interface JobDoc<P, R> extends Doc {
  kind: string;
  status: JobStatus;
  /** Whom the job belongs to (an account); lookups for an owner never see another owner's jobs. */
  owner_id: string | null;
  payload: P;
  created_at_ms: number;
  /** A queued job not started by then is never started: the sweeper marks it `expired`. */
  expires_at_ms: number;
  in_progress_at_ms?: number;
  completed_at_ms?: number;
  failed_at_ms?: number;
  cancelled_at_ms?: number;
  expired_at_ms?: number;
  cancel_requested_at_ms?: number;
  /** The worker holding the lease; only it may renew the lease or write the outcome. */
  worker_id: string | null;
  lease_until_ms: number;
  /** Claims so far: above 1, earlier runs died or were handed back. */
  attempts: number;
  result?: R;
  error?: JobError;
}

export type InterruptReason = 'cancelled' | 'lease_lost' | 'shutdown';

/** The abort reason of a running job's signal, so whoever stops on it knows why. */
export class JobInterrupted extends Error {
  constructor(readonly reason: InterruptReason) {
    super(`job interrupted: ${reason}`);
    this.name = 'JobInterrupted';
  }
}

/** Why `signal` was aborted by the worker pool, or null when it was not. */
export const interruptReason = (signal: AbortSignal): InterruptReason | null =>
  signal.aborted && signal.reason instanceof JobInterrupted ? signal.reason.reason : null;
