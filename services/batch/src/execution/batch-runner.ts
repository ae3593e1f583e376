import type { BlobStore } from '@gw/blobs';
import { JobStore, type JobHandler } from '@gw/jobs';
import type { Logger } from '@gw/platform';
import type { Collection, Store } from '@gw/store';
import { isTerminalBatch, type BatchDoc, type BatchStatus } from '../batches/batch-records';
import { blobKeyOf } from '../files/file-records';
import { countLines, prepareLines, type LineDoc } from './batch-lines';
import { finalizeBatch, type FinalizeDeps } from './finalize';
import { runPlatformLines, type PlatformRunDeps } from './platform-run';

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
  finalize: Omit<FinalizeDeps, 'batches' | 'lines' | 'logger'>;
  maxLineBytes: number;
  /** Pause before running a batch again whose lines could not all be recorded (the store failed). */
  retryMs: number;
  logger: Logger;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Works one batch under its job's lease, from wherever an earlier run stopped: records its lines (once),
 * sends the unanswered ones, then finalizes it as completed, or as cancelled once a cancel was asked for.
 */
export function batchJobHandler(deps: BatchRunnerDeps): JobHandler<BatchJobPayload, BatchJobResult> {
  const { batches, lines, logger } = deps;
  const finalizeDeps: FinalizeDeps = { ...deps.finalize, batches, lines, logger };
  const platformDeps: PlatformRunDeps = { ...deps.platform, batches, lines, logger };
  const input = (batch: BatchDoc) => deps.blobs.get(blobKeyOf(batch.input_file_id));

  return async ({ job, signal }) => {
    let batch = await batches.findOne({ _id: job.payload.batch_id });
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
    for (;;) {
      const ran = await runPlatformLines(platformDeps, batch, await input(batch), signal);
      if (ran === 'cancel_requested') return { status: (await finalizeBatch(finalizeDeps, batch, 'cancelled', signal)).status };
      if ((await countLines(lines, batch._id)).pending === 0) return { status: (await finalizeBatch(finalizeDeps, batch, 'completed', signal)).status };
      logger.warn({ batchId: batch._id }, 'some lines were not recorded; running them again');
      await pause(deps.retryMs);
      batch = (await batches.findOne({ _id: batch._id }))!;
    }
  };
}
