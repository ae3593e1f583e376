import { z } from 'zod';
import { bindHostEnv, bool, engineEnv, identitySecretEnv, loadConfig, port } from '@gw/platform';

export const edgeConfigSchema = z.object({
  EDGE_PORT: port(8080),
  /** The public port's interface: the edge is the one service clients reach. */
  EDGE_HOST: z.string().min(1).default('0.0.0.0'),
  /** Probes and /metrics live on their own port, never on the public one. */
  EDGE_ADMIN_PORT: port(9080),
  KEYS_GRPC_ADDR: z.string().default('127.0.0.1:9081'),
  KEYS_HTTP_URL: z.string().url().default('http://127.0.0.1:8081'),
  BILLING_HTTP_URL: z.string().url().default('http://127.0.0.1:8082'),
  INFERENCE_HTTP_URL: z.string().url().default('http://127.0.0.1:8083'),
  BATCH_HTTP_URL: z.string().url().default('http://127.0.0.1:8084'),
  WEBHOOKS_HTTP_URL: z.string().url().default('http://127.0.0.1:8086'),
  MEDIA_HTTP_URL: z.string().url().default('http://127.0.0.1:8085'),
  /** Largest request body accepted, in bytes. */
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  /** Largest body of a files or batches request (file uploads); the batch service enforces its own file limit below it. */
  UPLOAD_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(201 * 1024 * 1024),
  /** Largest body of a media request (audio uploads, image edits); the media service enforces its own limit. */
  MEDIA_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(32 * 1024 * 1024),
  /** Authenticated keys are cached this long; key-change events drop entries sooner. */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * How long past its TTL a cached key is still served while the keys service cannot answer (down, or past
   * its deadline); never past the key's own expiry, and never after a key-change event for it. 0 disables.
   */
  AUTH_STALE_WINDOW_MS: z.coerce.number().int().min(0).default(5 * 60_000),
  /**
   * A service that sends nothing for this long is cut off: a stream then ends with its error event, any other
   * answer with a 503 or a closed connection. Bounds every wait on a service that hangs; above the longest
   * silence a working call can have (provider timeouts of 120 s, times a retry and a fallback, are 480 s).
   */
  UPSTREAM_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(600_000),
  LOG_LEVEL: z.string().default('info'),
  /** One log line per HTTP request (method, path, status, duration, trace id). */
  ACCESS_LOG: bool(false),
  ...engineEnv,
  ...identitySecretEnv,
  /** The admin port's interface (probes, /metrics). */
  ...bindHostEnv,
});

export type EdgeConfig = z.infer<typeof edgeConfigSchema>;
export const loadEdgeConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(edgeConfigSchema, env);
