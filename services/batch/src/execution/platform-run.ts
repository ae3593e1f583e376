import type { Readable } from 'node:stream';
import { inConsumerSpan, type Logger } from '@gw/platform';
import type { Collection } from '@gw/store';
import type { BatchDoc } from '../batches/batch-records';
import { inputRequests } from '../batches/input-lines';
import { countLines, linesInOrder, type LineDoc } from './batch-lines';
import { Semaphore, type AccountLimits } from './concurrency';
import { callLine, type ChatCaller } from './line-call';

export interface PlatformRunOptions {
  lineConcurrency: number;
  lineDeadlineMs: number;
  lineRetryMs: number;
  progressMs: number;
  maxLineBytes: number;
}

export interface PlatformRunDeps {
  batches: Collection<BatchDoc>;
  lines: Collection<LineDoc>;
  inference: ChatCaller;
  accountLimits: AccountLimits;
  options: PlatformRunOptions;
  logger: Logger;
  now?: () => number;
}

/**
 * Fans a batch's unanswered lines out to inference, at most `lineConcurrency` at once (and the account's
 * bound across its batches), each under the request id recorded for it. A line's answer is written (guarded
 * by `pending`, so a line is answered once) as soon as it comes; `request_counts` follow every
 * `progressMs`. A cancel (the batch turned `cancelling`) stops new lines from being sent; the run returns
 * once the lines in flight are answered. A stopped run (shutdown, lost lease) throws the signal's reason.
 */
export async function runPlatformLines(deps: PlatformRunDeps, batch: BatchDoc, input: Readable, signal: AbortSignal): Promise<'done' | 'cancel_requested'> {
  const { batches, lines, options } = deps;
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ batchId: batch._id });
  const pending = new Map<number, LineDoc>();
  for await (const doc of linesInOrder(lines, batch._id, { state: 'pending' })) pending.set(doc.line, doc);

  const counts = await countLines(lines, batch._id);
  let cancelRequested = batch.status === 'cancelling';
  const writeProgress = async () => {
    // Only while the batch runs: a worker that lost its lease must not overwrite the final counts.
    const current = await batches.findOneAndUpdate(
      { _id: batch._id, status: { $in: ['in_progress', 'cancelling'] } },
      { $set: { 'request_counts.completed': counts.succeeded, 'request_counts.failed': counts.failed } },
    );
    if (current?.status === 'cancelling') cancelRequested = true;
  };
  let ticking = Promise.resolve();
  const ticker = setInterval(() => {
    ticking = ticking.then(writeProgress).catch((err: unknown) => log.warn({ err }, 'writing batch progress failed; retrying'));
  }, options.progressMs);

  const perBatch = new Semaphore(options.lineConcurrency);
  const inFlight = new Set<Promise<void>>();
  try {
    for await (const req of inputRequests(input, batch.endpoint, options.maxLineBytes)) {
      const line = pending.get(req.line);
      if (!line) continue;
      if (cancelRequested || signal.aborted) break;
      await perBatch.acquire();
      const releaseAccount = await deps.accountLimits.acquire(batch.account_id);
      if (cancelRequested || signal.aborted) {
        releaseAccount();
        perBatch.release();
        break;
      }
      const task = (async () => {
        try {
          // Each line continues the trace of the request that created the batch, whichever instance runs it.
          const outcome = await inConsumerSpan('batch', 'batch line', batch.traceparent ?? undefined, () => callLine(deps.inference, line, req.body, {
            identity: batch.identity, traceId: batch.trace_id, deadlineMs: options.lineDeadlineMs, retryMs: options.lineRetryMs, signal,
          }));
          const written = await lines.updateOne(
            { _id: line._id, state: 'pending' },
            { $set: { state: outcome.state, output_json: JSON.stringify(outcome.output), finished_at_ms: now() } },
          );
          if (written.modified === 1) {
            if (outcome.state === 'succeeded') counts.succeeded++;
            else counts.failed++;
          }
        } catch (err) {
          if (!signal.aborted) log.error({ err, line: line.line }, 'a batch line could not be recorded; the next run sends it again');
        } finally {
          releaseAccount();
          perBatch.release();
        }
      })();
      inFlight.add(task);
      void task.finally(() => inFlight.delete(task));
    }
    await Promise.all(inFlight);
  } finally {
    clearInterval(ticker);
    await ticking;
  }
  if (signal.aborted) throw signal.reason;
  await writeProgress();
  return cancelRequested ? 'cancel_requested' : 'done';
}
