import * as path from 'node:path';
import { z } from 'zod';
import { openCallJournalEnv } from '@gw/billed-call';
import { archiveEnv } from '@gw/call-archive';
import { bindHostEnv, bool, engineEnv, identitySecretEnv, loadConfig, millionths, port } from '@gw/platform';

export const inferenceConfigSchema = z.object({
  INFERENCE_HTTP_PORT: port(8083),
  /** The inference gRPC API (gateway.inference.v1), on BIND_HOST like the HTTP port. */
  INFERENCE_GRPC_PORT: port(9083),
  /** Where API keys presented to the gRPC API are checked. */
  KEYS_GRPC_ADDR: z.string().default('127.0.0.1:9081'),
  CATALOG_FILE: z.string().default(path.resolve(__dirname, '../../../config/catalog.json')),
  BILLING_GRPC_ADDR: z.string().default('127.0.0.1:9082'),
  /** Output bound of a spend hold for a call that sets no output cap on a model that declares no limit. */
  SPEND_DEFAULT_MAX_OUTPUT_TOKENS: z.coerce.number().int().positive().default(4_096),
  /**
   * Spend grants: the most one instance holds in billing per key to admit calls without a billing call each
   * (0: a billing call per call). An instance that dies leaves at most this per key held until billing's hold
   * expiry; near a limit grants shrink to the call itself.
   */
  SPEND_GRANT_MAX_USD: millionths('SPEND_GRANT_MAX_USD').default(1_000_000),
  /** A grant is sized for about this many calls like the one that asks for it. */
  SPEND_GRANT_CALLS: z.coerce.number().int().positive().default(256),
  /** A grant takes new calls for this long, then gives back what its calls did not use. */
  SPEND_GRANT_LIFETIME_MS: z.coerce.number().int().positive().default(1_000),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  /** Linger of the usage-event batcher: events leave in batches, off the response path. */
  USAGE_LINGER_MS: z.coerce.number().int().min(0).default(5),
  ...archiveEnv,
  /** How long a stream whose client went away is still read to learn (and bill) what was generated. */
  ABANDONED_STREAM_DRAIN_MS: z.coerce.number().int().min(0).default(30_000),
  /** A `: ping` comment on a stream idle this long (0: none), so idle proxies keep it open. */
  SSE_HEARTBEAT_MS: z.coerce.number().int().min(0).default(15_000),
  ...openCallJournalEnv,
  /** Async chat job workers in this instance; 0 runs none (the instance still accepts and serves jobs). */
  ASYNC_CHAT_WORKERS: z.coerce.number().int().min(0).default(2),
  /** A worker's claim on a job: renewed while it works, taken over by another worker once it lapses. */
  ASYNC_CHAT_LEASE_MS: z.coerce.number().int().positive().default(30_000),
  /** Idle workers look for jobs this often; a submit to the same instance wakes them at once. */
  ASYNC_CHAT_POLL_MS: z.coerce.number().int().positive().default(1_000),
  /** How often a running job looks for a cancel flag set through another instance. */
  ASYNC_CHAT_CANCEL_CHECK_MS: z.coerce.number().int().positive().default(1_000),
  /** `expires_at` = created + this (an estimate); queued jobs past it are expired by the sweeper. */
  ASYNC_CHAT_EXPIRES_AFTER_MS: z.coerce.number().int().positive().default(24 * 60 * 60_000),
  ASYNC_CHAT_SWEEP_MS: z.coerce.number().int().positive().default(60_000),
  /** On shutdown, running jobs get this long to finish before they are aborted and their leases released. */
  ASYNC_CHAT_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(5_000),
  /**
   * gRPC calls with a caller-chosen request_id: a call's claim on its id, renewed while it runs; once lapsed
   * (the instance died), a retry with the id runs the call again (billing counts the id once).
   */
  IDEMPOTENT_CALL_LEASE_MS: z.coerce.number().int().positive().default(30_000),
  /** How long a completed call's response is kept to answer a retry with its request_id. */
  IDEMPOTENT_CALL_RETENTION_MS: z.coerce.number().int().positive().default(3 * 24 * 60 * 60_000),
  /** How often each instance deletes recorded responses past their retention. */
  IDEMPOTENT_CALL_SWEEP_MS: z.coerce.number().int().positive().default(10 * 60_000),
  LOG_LEVEL: z.string().default('info'),
  /** One log line per HTTP request (method, path, status, duration, trace id). */
  ACCESS_LOG: bool(false),
  ...engineEnv,
  ...identitySecretEnv,
  ...bindHostEnv,
});

export type InferenceConfig = z.infer<typeof inferenceConfigSchema>;
export const loadInferenceConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(inferenceConfigSchema, env);
