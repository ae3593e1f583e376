import type { BlobStore } from '@gw/blobs';
import { createOutbox, type Bus } from '@gw/bus';
import { loadCatalog } from '@gw/catalog';
import { openCallArchiver } from '@gw/call-archive';
import { createInferenceClient } from '@gw/inference-client';
import { JobWorkerPool } from '@gw/jobs';
import { outboundPolicyFromConfig } from '@gw/net-guard';
import { createNativeBatchProvider } from '@gw/providers';
import { IdentitySigner, startService, type Logger, type RunningService } from '@gw/platform';
import type { Store } from '@gw/store';
import { batchesCollection, CANCELLABLE, ensureBatchIndexes } from './batches/batch-records';
import { batchesRoutes } from './batches/batches-routes';
import { BatchesService } from './batches/batches-service';
import type { BatchConfig } from './config';
import { ensureLineIndexes, linesCollection } from './execution/batch-lines';
import { BatchCallbacks } from './execution/batch-callbacks';
import { batchJobHandler, batchJobStore, type BatchJobPayload, type BatchJobResult } from './execution/batch-runner';
import { BillingCharges } from './execution/billing-charges';
import { AccountLimits } from './execution/concurrency';
import { NativeBatchProviders } from './execution/provider-route';
import { ensureFileIndexes, filesCollection } from './files/file-records';
import { filesRoutes } from './files/files-routes';
import { FilesService } from './files/files-service';

export interface BatchServiceDeps {
  config: BatchConfig;
  store: Store;
  bus: Bus;
  /** The blob engine for files; the caller owns (and closes) it, like the store. */
  blobs: BlobStore;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

/** Files and batches: the API, this instance's batch workers, and the maintenance sweep. */
export async function startBatchService({ config, store, bus, blobs, logger, env = process.env }: BatchServiceDeps): Promise<RunningService> {
  return startService({
    name: 'batch', logger, host: config.BIND_HOST, httpPort: config.BATCH_HTTP_PORT,
    identitySecret: config.GATEWAY_IDENTITY_SECRET, bodyLimitBytes: 1024 * 1024, accessLog: config.ACCESS_LOG,
  }, async ({ health, metrics, background, publisher, client }) => {
    const catalog = loadCatalog(config.CATALOG_FILE, env);
    const batches = batchesCollection(store);
    const lines = linesCollection(store);
    const files = filesCollection(store);
    await Promise.all([ensureBatchIndexes(batches), ensureLineIndexes(lines), ensureFileIndexes(files)]);
    const jobs = batchJobStore(store);
    metrics.watchJobQueue(jobs.kind, () => jobs.queueStats());
    await jobs.ensureIndexes();

    const outbox = publisher('outbox', createOutbox({ bus, store, logger }));
    const callbacks = new BatchCallbacks(batches, outbox, logger);
    const signer = new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'batch');
    const inference = client('inference', createInferenceClient(config.INFERENCE_GRPC_ADDR, { kind: 'service', signer }));
    const billing = client('billing', new BillingCharges(config.BILLING_GRPC_ADDR, config.GATEWAY_IDENTITY_SECRET));
    const nativeBatches = client('native-batch-providers', new NativeBatchProviders(catalog, createNativeBatchProvider, env));

    let batchesService: BatchesService | null = null;
    const filesService = new FilesService(files, blobs, {
      maxBytes: config.FILE_MAX_BYTES, maxLines: config.FILE_MAX_LINES, expiresAfterMs: config.FILE_EXPIRES_AFTER_S * 1000,
    }, (accountId, fileId) => batchesService!.usesFile(accountId, fileId));

    const workers = background('batch-workers', new JobWorkerPool<BatchJobPayload, BatchJobResult>({
      jobs, logger: logger.child({ component: 'batch-workers' }),
      handler: batchJobHandler({
        batches, lines, blobs, logger, maxLineBytes: config.BATCH_LINE_MAX_BYTES, retryMs: config.BATCH_LINE_RETRY_MS,
        platform: {
          inference, accountLimits: new AccountLimits(config.BATCH_ACCOUNT_CONCURRENCY),
          options: {
            lineConcurrency: config.BATCH_LINE_CONCURRENCY, lineDeadlineMs: config.BATCH_LINE_TIMEOUT_MS, lineRetryMs: config.BATCH_LINE_RETRY_MS,
            progressMs: config.BATCH_PROGRESS_MS, maxLineBytes: config.BATCH_LINE_MAX_BYTES,
          },
        },
        provider: { outbox, providers: nativeBatches, pollMs: config.BATCH_PROVIDER_POLL_MS, archive: openCallArchiver(config, outbox, logger, publisher) },
        finalize: { files: filesService, billing, callbacks, billingWaitMs: config.BATCH_BILLING_WAIT_MS, billingPollMs: 250 },
      }),
      workers: config.BATCH_WORKERS,
      leaseMs: config.BATCH_LEASE_MS,
      pollMs: config.BATCH_POLL_MS,
      cancelCheckMs: config.BATCH_PROGRESS_MS,
      shutdownGraceMs: config.BATCH_SHUTDOWN_GRACE_MS,
      // A batch outlives many restarts of its workers; each run resumes where the last one stopped.
      maxAttempts: 1_000,
    }));
    batchesService = new BatchesService({
      batches, files: filesService, blobs, jobs, workers, callbacks, catalog,
      outbound: outboundPolicyFromConfig(config, logger), maxLineBytes: config.BATCH_LINE_MAX_BYTES,
      cancelWaitMs: Math.min(2 * config.BATCH_PROGRESS_MS + 500, 5_000),
    });
    const service = batchesService;

    // Every instance: callbacks a crash left pending, batches whose job a crash lost, files past their expiry.
    const maintain = async () => {
      await callbacks.sweep();
      await filesService.deleteExpired();
      for (const open of await batches.find({ status: { $in: [...CANCELLABLE, 'cancelling'] } }, { limit: 100, sort: { created_at_ms: 1 } })) {
        await service.enqueue(open);
      }
    };
    let sweeping = Promise.resolve();
    const sweep = () => { sweeping = sweeping.then(maintain).catch((err: unknown) => logger.warn({ err }, 'batch maintenance failed; retrying on the next sweep')); };
    sweep();
    const timer = setInterval(sweep, config.BATCH_MAINTENANCE_MS);
    timer.unref();
    background('batch-maintenance', { stop: async () => { clearInterval(timer); await sweeping; } });
    workers.start();

    health
      .addCheck('store', () => store.ping())
      .addCheck('bus', () => bus.ping(), 'degraded');
    return { routes: [filesRoutes(filesService), batchesRoutes(service)] };
  });
}
