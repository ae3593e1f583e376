import type { BlobStore } from '@gw/blobs';
import { JobStore, type JobHandler } from '@gw/jobs';
import type { Logger } from '@gw/platform';
import type { Collection, Store } from '@gw/store';
import { isTerminalBatch, type BatchDoc, type BatchStatus } from '../batches/batch-records';
import { blobKeyOf } from '../files/file-records';
import { countLines, prepareLines, type LineDoc } from './batch-lines';
import { finalizeBatch, type FinalizeDeps } from './finalize';
import { runPlatformLines, type PlatformRunDeps } from './platform-run';
import { runProviderBatch, type ProviderRunDeps } from './provider-run';

/** One leased job per batch (its id is the batch id): whoever holds the lease works the batch. */
export const BATCH_JOB_KIND = 'batch.run';

export interface BatchJobPayload {
  batch_id: string;
}

export interface BatchJobResult {
  status: BatchStatus;
}

export type BatchJobStore = JobStore<BatchJobPayload, BatchJobResult>;

export const batchJobStore = (store: Store): BatchJobStore => new JobStore<BatchJobPayload, BatchJobResult>({ store, kind: BATCH_JOB_KIND });

export interface BatchRunnerDeps {
  batches: Collection<BatchDoc>;
  lines: Collection<LineDoc>;
  blobs: BlobStore;
  platform: Omit<PlatformRunDeps, 'batches' | 'lines' | 'logger'>;
  provider: Omit<ProviderRunDeps, 'batches' | 'lines' | 'logger' | 'maxLineBytes'>;
  finalize: Omit<FinalizeDeps, 'batches' | 'lines' | 'logger'>;
  maxLineBytes: number;
  /** First pause before a failed run (an engine or the provider unreachable) is tried again; it doubles up to a minute. */
  retryMs: number;
  logger: Logger;
}

/** Resolves after `ms`, or rejects with the signal's reason once the run is stopped. */
const pause = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  if (signal.aborted) return reject(signal.reason);
  const timer = setTimeout(() => { signal.removeEventListener('abort', stop); resolve(); }, ms);
  const stop = () => { clearTimeout(timer); reject(signal.reason); };
  signal.addEventListener('abort', stop, { once: true });
});

/** The longest pause between two tries of a batch whose run keeps failing (a store, bus or provider outage). */
const MAX_RETRY_PAUSE_MS = 60_000;

/**
 * Works one batch under its job's lease, from wherever an earlier run stopped: records its lines (once),
 * then on the platform sends the unanswered ones and finalizes it as completed, or as cancelled once a cancel
 * was asked for; on a provider's batch API submits, polls and maps the results (see provider-run.ts).
 * Every step is idempotent, so a run that fails (an engine or the provider unreachable) is tried again from
 * the top, with growing pauses, for as long as this worker holds the lease: a batch never ends half done.
 */
export function batchJobHandler(deps: BatchRunnerDeps): JobHandler<BatchJobPayload, BatchJobResult> {
  const { batches, lines, logger } = deps;
  const finalizeDeps: FinalizeDeps = { ...deps.finalize, batches, lines, logger };
  const platformDeps: PlatformRunDeps = { ...deps.platform, batches, lines, logger };
  const providerDeps: ProviderRunDeps = { ...deps.provider, batches, lines, logger, maxLineBytes: deps.maxLineBytes };
  const input = (batch: BatchDoc) => deps.blobs.get(blobKeyOf(batch.input_file_id));

  const runOnce = async (batchId: string, signal: AbortSignal): Promise<BatchJobResult> => {
    let batch = await batches.findOne({ _id: batchId });
    if (!batch) return { status: 'failed' };
    if (isTerminalBatch(batch.status)) {
      // Ended by an earlier run that died before its callback left: publish it now.
      await deps.finalize.callbacks.publish(batch);
      return { status: batch.status };
    }
    if (!batch.lines_prepared) {
      await prepareLines(lines, batch._id, await input(batch), batch.endpoint, deps.maxLineBytes);
      batch = (await batches.findOneAndUpdate({ _id: batch._id }, { $set: { lines_prepared: true } }))!;
    }
    if (batch.execution === 'provider') {
      const { outcome, errors } = await runProviderBatch(providerDeps, batch, () => input(batch!), signal);
      return { status: (await finalizeBatch(finalizeDeps, batch, outcome, signal, errors ?? null)).status };
    }
    const ran = await runPlatformLines(platformDeps, batch, await input(batch), signal);
    if (ran === 'cancel_requested') return { status: (await finalizeBatch(finalizeDeps, batch, 'cancelled', signal)).status };
    if ((await countLines(lines, batch._id)).pending > 0) throw new Error('some lines were not recorded; running them again');
    return { status: (await finalizeBatch(finalizeDeps, batch, 'completed', signal)).status };
  };

  return async ({ job, signal }) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await runOnce(job.payload.batch_id, signal);
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        const pauseMs = Math.min(deps.retryMs * 2 ** Math.min(attempt, 10), MAX_RETRY_PAUSE_MS);
        logger.error({ err, batchId: job.payload.batch_id, attempt, pauseMs }, 'a batch run failed; trying again from where it stopped');
        await pause(pauseMs, signal);
      }
    }
  };
}
