import { GatewayError, toGatewayError, type Identity, type Logger } from '@gw/platform';
import type { ChatCompletion } from '@gw/provider-spec';
import type { ChatJobDoc } from './chat-job';
import type { ChatJobStore } from './chat-job-store';

/** The part of ChatService a job needs: one billed, abortable, non-streaming completion. */
export interface ChatCompleter {
  complete(body: unknown, id: Identity, traceId: string, opts: { requestId: string; signal: AbortSignal }): Promise<{ requestId: string; completion: ChatCompletion }>;
}

export type InterruptReason = 'cancelled' | 'lease_lost' | 'shutdown';

/** The abort reason of a job's signal: the provider call rethrows it, so the runner knows why it stopped. */
export class JobInterrupted extends Error {
  constructor(readonly reason: InterruptReason) {
    super(`chat job interrupted: ${reason}`);
  }
}

export interface RunnerContext {
  jobs: ChatJobStore;
  chat: ChatCompleter;
  /** Resolves once every usage event recorded so far is durable (on the bus or in the outbox). */
  flushUsage: () => Promise<void>;
  logger: Logger;
  leaseMs: number;
  cancelCheckMs: number;
  maxAttempts: number;
}

/** Aborts a job's work once, with the first reason given. */
export function interrupt(controller: AbortController, reason: InterruptReason): void {
  if (!controller.signal.aborted) controller.abort(new JobInterrupted(reason));
}

const reasonOf = (signal: AbortSignal): InterruptReason | null =>
  signal.aborted && signal.reason instanceof JobInterrupted ? signal.reason.reason : null;

/**
 * Runs one claimed job to an outcome written under this worker's lease. Order matters for money: the
 * completion's usage event is made durable before the job says `completed`. A crash in between re-runs the
 * job under the same request_id, and billing drops the duplicate, so the job is billed exactly once.
 */
export async function runClaimedJob(job: ChatJobDoc, workerId: string, ctx: RunnerContext, controller: AbortController): Promise<void> {
  const log = ctx.logger.child({ jobId: job._id, requestId: job.request_id, workerId, attempt: job.attempts });
  if (job.cancel_requested_at_ms !== undefined) {
    await ctx.jobs.finishCancelled(job._id, workerId);
    return;
  }
  if (job.attempts > ctx.maxAttempts) {
    log.error('chat job keeps losing its worker; giving up');
    await ctx.jobs.fail(job._id, workerId, { code: 'too_many_attempts', message: `The job was started ${ctx.maxAttempts} times without finishing` });
    return;
  }
  const stopWatching = watchJob(job, workerId, ctx, controller, log);
  try {
    let completion: ChatCompletion;
    try {
      ({ completion } = await ctx.chat.complete(JSON.parse(job.request_json), job.identity, job.trace_id, { requestId: job.request_id, signal: controller.signal }));
    } catch (err) {
      await writeFailure(job, workerId, ctx, controller.signal, err, log);
      return;
    }
    if (!(await flushUntilDurable(ctx, controller.signal, log))) {
      // Still ours but shutting down: give it back; the re-run bills under the same request_id.
      if (reasonOf(controller.signal) === 'shutdown') await ctx.jobs.release(job._id, workerId);
      return;
    }
    if (!(await ctx.jobs.complete(job._id, workerId, completion))) {
      log.warn('lease lost before the completion was written; the new owner finishes the job');
    }
  } finally {
    stopWatching();
  }
}

async function writeFailure(job: ChatJobDoc, workerId: string, ctx: RunnerContext, signal: AbortSignal, err: unknown, log: Logger): Promise<void> {
  switch (reasonOf(signal)) {
    case 'cancelled':
      // Aborted before the provider answered: no usage event was recorded, so nothing is billed.
      await ctx.jobs.finishCancelled(job._id, workerId);
      return;
    case 'shutdown':
      await ctx.jobs.release(job._id, workerId);
      return;
    case 'lease_lost':
      log.warn('lease lost while working; the new owner finishes the job');
      return;
    default: {
      if (!(err instanceof GatewayError)) log.error({ err }, 'chat job failed unexpectedly');
      const e = toGatewayError(err);
      await ctx.jobs.fail(job._id, workerId, { code: e.code, message: e.message });
    }
  }
}

/** Retries the flush while the job is still ours; false when it stopped being ours or is shutting down. */
async function flushUntilDurable(ctx: RunnerContext, signal: AbortSignal, log: Logger): Promise<boolean> {
  for (;;) {
    try {
      await ctx.flushUsage();
      return true;
    } catch (err) {
      const reason = reasonOf(signal);
      if (reason === 'lease_lost' || reason === 'shutdown') return false;
      log.warn({ err }, 'usage event not yet durable; retrying before the job is completed');
      await new Promise((r) => setTimeout(r, Math.min(1_000, ctx.leaseMs / 3)));
    }
  }
}

/**
 * While the job runs: renew the lease (a third of its length), and look at the job for a cancel flag or a
 * lost lease (a cancel may arrive at another instance). Either aborts the in-flight provider call.
 */
function watchJob(job: ChatJobDoc, workerId: string, ctx: RunnerContext, controller: AbortController, log: Logger): () => void {
  const stopRenewing = every(Math.max(10, Math.floor(ctx.leaseMs / 3)), async () => {
    if (!(await ctx.jobs.renewLease(job._id, workerId, ctx.leaseMs))) interrupt(controller, 'lease_lost');
  }, log);
  const stopChecking = every(ctx.cancelCheckMs, async () => {
    const current = await ctx.jobs.findById(job._id);
    if (!current || current.worker_id !== workerId || current.status !== 'in_progress') interrupt(controller, 'lease_lost');
    else if (current.cancel_requested_at_ms !== undefined) interrupt(controller, 'cancelled');
  }, log);
  return () => {
    stopRenewing();
    stopChecking();
  };
}

/** Runs `task` every `ms`, never overlapping itself; a store hiccup is logged, not fatal. */
function every(ms: number, task: () => Promise<void>, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      await task();
    } catch (err) {
      log.warn({ err }, 'chat job watch failed; retrying');
    }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  timer = setTimeout(tick, ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
