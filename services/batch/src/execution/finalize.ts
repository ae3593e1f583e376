import { Readable } from 'node:stream';
import { microsToUsd, type Logger } from '@gw/platform';
import type { Collection } from '@gw/store';
import type { BatchDoc, TerminalBatchStatus } from '../batches/batch-records';
import type { FilesService } from '../files/files-service';
import { countLines, linesInOrder, outputLineId, type LineDoc } from './batch-lines';
import type { BatchCallbacks } from './batch-callbacks';
import { billedTotals, type ChargeLookup } from './billing-charges';

export interface FinalizeDeps {
  batches: Collection<BatchDoc>;
  lines: Collection<LineDoc>;
  files: Pick<FilesService, 'save'>;
  billing: ChargeLookup;
  callbacks: BatchCallbacks;
  billingWaitMs: number;
  billingPollMs: number;
  logger: Logger;
  now?: () => number;
}

/** Error lines of lines that never ran (API-NOTES: error codes such as `batch_cancelled`, `batch_expired`). */
const NEVER_RAN: Record<string, { code: string; message: string }> = {
  cancelled: { code: 'batch_cancelled', message: 'The batch was cancelled before this request was sent' },
  expired: { code: 'batch_expired', message: 'The batch expired before this request was answered' },
};

function fileLine(doc: LineDoc): string {
  const never = NEVER_RAN[doc.state];
  if (never) return `${JSON.stringify({ id: outputLineId(doc.request_id), custom_id: doc.custom_id, response: null, error: never })}\n`;
  return `${doc.output_json}\n`;
}

const fileIdOf = (batchId: string, kind: 'output' | 'errors') => `file-${kind}-${batchId.replace(/^batch_/, '')}`;

/**
 * Ends a batch: lines that never ran are settled by `outcome`; billing is waited on until every answered
 * line's charge is applied, and summed into `usage_billing` (so the sum of the lines' charges is the
 * balance change); the output and error files are written from the lines' records; then one guarded write
 * makes the batch terminal with a pending callback, which is published. Every step is idempotent: a run
 * that dies here is finished by the next.
 */
export async function finalizeBatch(deps: FinalizeDeps, batch: BatchDoc, outcome: TerminalBatchStatus, signal: AbortSignal): Promise<BatchDoc> {
  const { batches, lines } = deps;
  const now = deps.now ?? Date.now;
  const log = deps.logger.child({ batchId: batch._id });
  if (outcome === 'cancelled' || outcome === 'expired') {
    await lines.updateMany({ batch_id: batch._id, state: 'pending' }, { $set: { state: outcome, finished_at_ms: now() } });
  } else {
    await batches.updateOne({ _id: batch._id, status: 'in_progress' }, { $set: { status: 'finalizing', finalizing_at_ms: now() } });
  }

  const answered: string[] = [];
  for await (const doc of linesInOrder(lines, batch._id, { state: 'succeeded' })) answered.push(doc.request_id);
  const totals = await billedTotals(deps.billing, batch.account_id, answered, { waitMs: deps.billingWaitMs, pollMs: deps.billingPollMs, logger: log, signal });

  const counts = await countLines(lines, batch._id);
  const writeFile = async (kind: 'output' | 'errors', states: string[], count: number) => deps.files.save({
    id: fileIdOf(batch._id, kind), accountId: batch.account_id, filename: `${batch._id}_${kind === 'output' ? 'output' : 'error'}.jsonl`,
    purpose: 'batch_output', lines: count,
    content: Readable.from((async function* () {
      for await (const doc of linesInOrder(lines, batch._id, { state: { $in: states } })) yield fileLine(doc);
    })()),
  });
  const output = counts.succeeded > 0 || outcome === 'completed' ? await writeFile('output', ['succeeded'], counts.succeeded) : null;
  const errors = counts.failed > 0 ? await writeFile('errors', ['failed', 'cancelled', 'expired'], counts.failed) : null;

  const endedAt = now();
  const ended = await batches.findOneAndUpdate(
    { _id: batch._id, status: { $in: ['in_progress', 'finalizing', 'cancelling', 'validating'] } },
    {
      $set: {
        status: outcome, [`${outcome}_at_ms`]: endedAt, output_file_id: output?._id ?? null, error_file_id: errors?._id ?? null,
        request_counts: { total: batch.request_counts.total, completed: counts.succeeded, failed: counts.failed },
        usage_billing: {
          list_cost: microsToUsd(totals.listMicros), charged_cost: microsToUsd(totals.chargedMicros),
          list_cost_micros: totals.listMicros, charged_cost_micros: totals.chargedMicros, billed_requests: totals.billed,
        },
        callback_pending: true,
      },
    },
  );
  const final = ended ?? (await batches.findOne({ _id: batch._id }))!;
  await deps.callbacks.publish(final).catch((err: unknown) => log.warn({ err }, 'the batch callback waits for the next sweep'));
  log.info({ status: final.status, completed: counts.succeeded, failed: counts.failed, chargedMicros: totals.chargedMicros }, 'batch finished');
  return final;
}
