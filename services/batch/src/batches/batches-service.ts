import { BlobNotFoundError, type BlobStore } from '@gw/blobs';
import { listBatchModels, resolveBatchExecution, type BatchExecution, type Catalog } from '@gw/catalog';
import { checkOutboundUrl, type OutboundPolicy } from '@gw/net-guard';
import { currentTraceparent, GatewayError, InputError, NotFoundError, newId, type Identity } from '@gw/platform';
import type { Collection } from '@gw/store';
import type { BatchCallbacks } from '../execution/batch-callbacks';
import type { BatchJobStore } from '../execution/batch-runner';
import type { FilesService } from '../files/files-service';
import { listPage, type ListPage, type PageQuery } from '../list-page';
import { CANCELLABLE, isTerminalBatch, toBatchObject, toCancelObject, type BatchDoc, type BatchErrors, type BatchObject } from './batch-records';
import { parseCreateBatch, type CreateBatchRequest } from './create-request';
import { checkInputFile, type LineProblem } from './input-lines';

export interface BatchesServiceDeps {
  batches: Collection<BatchDoc>;
  files: Pick<FilesService, 'get'>;
  blobs: BlobStore;
  jobs: BatchJobStore;
  workers: { wake(): void };
  callbacks: BatchCallbacks;
  catalog: Catalog;
  outbound: OutboundPolicy;
  maxLineBytes: number;
  /** How long a cancel waits for the batch's worker to reach `cancelled` before answering `cancelling`. */
  cancelWaitMs: number;
  now?: () => number;
}

const DAY_MS = 24 * 3600_000;
/** The job of a batch is never expired from the queue: `expires_at` is an estimate, not a kill switch (spec). */
const JOB_NEVER_EXPIRES_MS = 3650 * DAY_MS;

// Another account's batch is indistinguishable from a missing one.
const notFound = (batchId: string) => new NotFoundError(`No such batch: ${batchId}`, 'batch_id', 'batch_not_found');

function validationErrors(problems: LineProblem[], fallback?: GatewayError): BatchErrors {
  const first = problems[0];
  const message = first
    ? `The input file is invalid: ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : ''}`
    : fallback!.message;
  return {
    message, code: first?.code ?? fallback!.code, type: 'invalid_request_error', stage: 'validating', object: 'list',
    data: first ? problems : [{ code: fallback!.code, message: fallback!.message, param: 'body.model', line: null }],
  };
}

/** Batches of an account: create (the input checked once, the execution resolved), read, list, cancel. */
export class BatchesService {
  private readonly now: () => number;

  constructor(private readonly deps: BatchesServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  models() {
    return { object: 'list' as const, data: listBatchModels(this.deps.catalog) };
  }

  async create(identity: Identity, traceId: string, body: unknown): Promise<BatchObject> {
    const req = parseCreateBatch(body);
    if (req.callbackUrl !== null) await checkOutboundUrl(req.callbackUrl, { ...this.deps.outbound, param: 'callback_url' });
    const file = await this.deps.files.get(identity.accountId, req.inputFileId).catch((err: unknown) => {
      throw err instanceof NotFoundError ? new NotFoundError(`No such file: ${req.inputFileId}`, 'input_file_id', 'file_not_found') : err;
    });
    if (file.purpose !== 'batch') throw new InputError(`File ${file._id} has purpose "${file.purpose}": a batch input needs "batch"`, 'input_file_id');

    const input = await this.deps.blobs.get(file.blob_key).catch((err: unknown) => {
      // Deleted between reading its record and its bytes: gone, as a moment later.
      throw err instanceof BlobNotFoundError ? new NotFoundError(`No such file: ${req.inputFileId}`, 'input_file_id', 'file_not_found') : err;
    });
    const check = await checkInputFile(input, { endpoint: req.endpoint, maxLineBytes: this.deps.maxLineBytes });
    const problems = check.total === 0 ? [{ code: 'empty_file', message: 'The file has no requests', param: null, line: null }] : check.problems;
    let resolved: BatchExecution = { execution: req.execution === 'provider' ? 'provider' : 'platform', fallback_from_provider: false };
    let errors: BatchErrors | null = problems.length > 0 ? validationErrors(problems) : null;
    if (!errors && check.clientModel !== null) {
      try {
        resolved = resolveBatchExecution(this.deps.catalog, check.clientModel, req.execution);
      } catch (err) {
        // Asking for a provider route the model lacks is the request's mistake; a model batches cannot use is the file's.
        if (err instanceof GatewayError && err.param === 'execution') throw err;
        if (!(err instanceof GatewayError)) throw err;
        errors = validationErrors([], err);
      }
    }
    const doc = this.newBatch(identity, traceId, req, resolved, check.clientModel, check.total, errors);
    await this.deps.batches.insertOne(doc);
    if (errors) {
      await this.deps.callbacks.publish(doc);
    } else {
      await this.enqueue(doc);
    }
    return toBatchObject(doc);
  }

  private newBatch(identity: Identity, traceId: string, req: CreateBatchRequest, resolved: BatchExecution, clientModel: string | null, total: number, errors: BatchErrors | null): BatchDoc {
    const created = this.now();
    return {
      _id: newId('batch_'), account_id: identity.accountId, identity, trace_id: traceId, traceparent: currentTraceparent() ?? null,
      status: errors ? 'failed' : 'in_progress', endpoint: req.endpoint, completion_window: req.completionWindow,
      execution_preference: req.execution, execution: resolved.execution, fallback_from_provider: resolved.fallback_from_provider,
      deployment_id: resolved.deployment?.id ?? null, provider_handle_json: null, provider_cancel_sent: false, input_file_id: req.inputFileId, client_model: clientModel,
      output_file_id: null, error_file_id: null, request_counts: { total: errors ? 0 : total, completed: 0, failed: 0 }, lines_prepared: false,
      usage_billing: null, metadata_json: req.metadata ? JSON.stringify(req.metadata) : null, errors, callback_url: req.callbackUrl,
      callback_pending: errors !== null, created_at_ms: created, in_progress_at_ms: errors ? null : created, finalizing_at_ms: null,
      completed_at_ms: null, failed_at_ms: errors ? created : null, expired_at_ms: null, cancelling_at_ms: null, cancelled_at_ms: null,
      expires_at_ms: created + DAY_MS,
    };
  }

  /** Idempotent per batch id: the maintenance sweep enqueues again any batch whose enqueue a crash lost. */
  async enqueue(doc: BatchDoc): Promise<void> {
    await this.deps.jobs.enqueue({ id: doc._id, payload: { batch_id: doc._id }, ownerId: doc.account_id, expiresAtMs: doc.created_at_ms + JOB_NEVER_EXPIRES_MS });
    this.deps.workers.wake();
  }

  async get(accountId: string, batchId: string): Promise<BatchObject> {
    return toBatchObject(await this.owned(accountId, batchId));
  }

  list(accountId: string, query: PageQuery): Promise<ListPage<BatchObject>> {
    return listPage(this.deps.batches, { account_id: accountId }, query, toBatchObject);
  }

  /** In flight: `cancelling`, and `cancelled` once its worker has stopped (waited for briefly). Terminal: unchanged. */
  async cancel(accountId: string, batchId: string) {
    const flagged = await this.deps.batches.findOneAndUpdate(
      { _id: batchId, account_id: accountId, status: { $in: CANCELLABLE } },
      { $set: { status: 'cancelling', cancelling_at_ms: this.now() } },
    );
    let doc = flagged ?? (await this.owned(accountId, batchId));
    if (flagged) {
      this.deps.workers.wake();
      const deadline = Date.now() + this.deps.cancelWaitMs;
      while (!isTerminalBatch(doc.status) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        doc = (await this.deps.batches.findOne({ _id: batchId })) ?? doc;
      }
    }
    return toCancelObject(doc);
  }

  /** A batch not yet finished still reads its input file. */
  async usesFile(accountId: string, fileId: string): Promise<boolean> {
    return (await this.deps.batches.count({ account_id: accountId, input_file_id: fileId, status: { $in: [...CANCELLABLE, 'cancelling'] } })) > 0;
  }

  private async owned(accountId: string, batchId: string): Promise<BatchDoc> {
    const doc = await this.deps.batches.findOne({ _id: batchId, account_id: accountId });
    if (!doc) throw notFound(batchId);
    return doc;
  }
}
