import * as path from 'node:path';
import { z } from 'zod';
import { openCallJournalEnv } from '@gw/billed-call';
import { archiveEnv } from '@gw/call-archive';
import { outboundGuardEnv } from '@gw/net-guard';
import { bindHostEnv, bool, engineEnv, identitySecretEnv, loadConfig, port } from '@gw/platform';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const mediaConfigSchema = z.object({
  MEDIA_HTTP_PORT: port(8085),
  CATALOG_FILE: z.string().default(path.resolve(__dirname, '../../../config/catalog.json')),
  /** Billing's gRPC API: the spend hold of every media call. */
  BILLING_GRPC_ADDR: z.string().min(1).default('127.0.0.1:9082'),
  /**
   * The gateway's public base URL (the edge, without `/v1`): signed media URLs point there, for clients and
   * for providers fetching `asset://` inputs.
   */
  MEDIA_PUBLIC_BASE_URL: z.string().url().default('http://127.0.0.1:8080'),
  /** Lifetime of a signed media URL (asset inputs handed to providers, video content links). */
  MEDIA_SIGNED_URL_TTL_S: positiveInt(900),
  /** Largest request body (multipart audio uploads, image edits with their input images), in bytes. */
  MEDIA_BODY_LIMIT_BYTES: positiveInt(32 * 1024 * 1024),
  /** Largest audio a transcription fetches from `file_url` or accepts inline, in bytes. */
  MEDIA_AUDIO_MAX_BYTES: positiveInt(25 * 1024 * 1024),
  /** Largest input image or mask, in bytes (uploaded, inline, or fetched from a URL). */
  MEDIA_IMAGE_MAX_BYTES: positiveInt(20 * 1024 * 1024),
  /** Test-only: a PEM file of extra CA certificates trusted when fetching caller URLs (a test server's self-signed one). */
  MEDIA_EXTRA_CA_FILE: z.string().min(1).optional(),
  /** An idle stream (image partials, transcript deltas) carries a `: ping` comment this often; 0: none. */
  SSE_HEARTBEAT_MS: z.coerce.number().int().min(0).default(15_000),
  /** Time limit of one provider call (and of a `file_url` fetch). */
  MEDIA_PROVIDER_TIMEOUT_MS: positiveInt(120_000),
  /** Video tasks followed at once by this instance (each holds a leased job while its provider task runs); 0 follows none. */
  VIDEO_WORKERS: z.coerce.number().int().min(0).default(32),
  /** A poller's lease on a video: renewed while it follows the task, taken over by another instance once it lapses. */
  VIDEO_LEASE_MS: positiveInt(30_000),
  /** Idle wait of a poller for new videos (a submit on this instance wakes it at once). */
  VIDEO_CLAIM_POLL_MS: positiveInt(1_000),
  /** Waits between polls of one provider task: from the first, growing 1.5x per poll, to the second. */
  VIDEO_POLL_MIN_MS: positiveInt(2_000),
  VIDEO_POLL_MAX_MS: positiveInt(30_000),
  /** A video not finished this long after it was submitted is failed with `video_task_timeout`. */
  VIDEO_TASK_TIMEOUT_MS: positiveInt(3_600_000),
  /** The largest finished video copied into the blob store, in bytes. */
  VIDEO_MAX_BYTES: positiveInt(1024 * 1024 * 1024),
  /** Streams (image partials, transcript deltas, speech audio) are journaled, so a stream this instance dies in is still billed. */
  ...openCallJournalEnv,
  LOG_LEVEL: z.string().default('info'),
  ACCESS_LOG: bool(false),
  ...archiveEnv,
  ...outboundGuardEnv,
  ...engineEnv,
  ...identitySecretEnv,
  ...bindHostEnv,
});

export type MediaConfig = z.infer<typeof mediaConfigSchema>;
export const loadMediaConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(mediaConfigSchema, env);
