import * as path from 'node:path';
import { z } from 'zod';
import { archiveEnv } from '@gw/call-archive';
import { outboundGuardEnv } from '@gw/net-guard';
import { bindHostEnv, bool, engineEnv, identitySecretEnv, loadConfig, port } from '@gw/platform';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const batchConfigSchema = z.object({
  BATCH_HTTP_PORT: port(8084),
  CATALOG_FILE: z.string().default(path.resolve(__dirname, '../../../config/catalog.json')),
  /** Inference's gRPC API: every platform-executed line is one chat call there. */
  INFERENCE_GRPC_ADDR: z.string().min(1).default('127.0.0.1:9083'),
  /** Billing's gRPC API: the charges of a batch's lines, for `usage_billing`. */
  BILLING_GRPC_ADDR: z.string().min(1).default('127.0.0.1:9082'),
  /** Largest uploaded file, in bytes (refused while streaming: 400 naming `file`). */
  FILE_MAX_BYTES: positiveInt(200 * 1024 * 1024),
  /** Most lines an uploaded batch input file may have (400 naming `file`). */
  FILE_MAX_LINES: positiveInt(50_000),
  /** Largest single input line, in bytes: a longer line fails the batch at validation. */
  BATCH_LINE_MAX_BYTES: positiveInt(1024 * 1024),
  /** Uploaded and output files are kept this long (`expires_at`), then deleted (not while a running batch reads one). */
  FILE_EXPIRES_AFTER_S: positiveInt(30 * 24 * 3600),
  /** How often each instance publishes callbacks a crash left pending, re-queues lost batch jobs and deletes expired files. */
  BATCH_MAINTENANCE_MS: positiveInt(10_000),
  /** Batches worked at once by this instance; 0 runs none (the instance still serves the API). */
  BATCH_WORKERS: z.coerce.number().int().min(0).default(2),
  /** Lines of one batch in flight at once. */
  BATCH_LINE_CONCURRENCY: positiveInt(8),
  /** Lines of one account in flight at once in this instance, across its batches. */
  BATCH_ACCOUNT_CONCURRENCY: positiveInt(16),
  /** A worker's lease on a batch: renewed while it works, taken over by another instance once it lapses. */
  BATCH_LEASE_MS: positiveInt(30_000),
  BATCH_POLL_MS: positiveInt(1_000),
  /** How often a running batch looks for a cancel and writes its progress (`request_counts`). */
  BATCH_PROGRESS_MS: positiveInt(1_000),
  /** A line whose call could not be made (inference unavailable) is retried after this, with the same request id. */
  BATCH_LINE_RETRY_MS: positiveInt(1_000),
  /** How often a batch on a provider's batch API is polled (under its lease, by whichever instance holds it). */
  BATCH_PROVIDER_POLL_MS: positiveInt(30_000),
  /** How long finalizing waits for billing to have applied every answered line. */
  BATCH_BILLING_WAIT_MS: positiveInt(120_000),
  /** Per-line deadline of the inference call. */
  BATCH_LINE_TIMEOUT_MS: positiveInt(600_000),
  /** On shutdown, running batches get this long before their leases are handed back. */
  BATCH_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(5_000),
  LOG_LEVEL: z.string().default('info'),
  ACCESS_LOG: bool(false),
  ...archiveEnv,
  ...outboundGuardEnv,
  ...engineEnv,
  ...identitySecretEnv,
  ...bindHostEnv,
});

export type BatchConfig = z.infer<typeof batchConfigSchema>;
export const loadBatchConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(batchConfigSchema, env);
