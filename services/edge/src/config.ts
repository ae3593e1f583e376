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
  CONSOLE_HTTP_URL: z.string().url().default('http://127.0.0.1:8087'),
  MEDIA_HTTP_URL: z.string().url().default('http://127.0.0.1:8085'),
  /** Largest request body accepted, in bytes. */
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  /** Largest body of a files or batches request (file uploads); the batch service enforces its own file limit below it. */
  UPLOAD_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(201 * 1024 * 1024),
  /** Largest body of a media request (audio uploads, image edits); the media service enforces its own limit. */
  MEDIA_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(32 * 1024 * 1024),
  /**
   * Bytes of request bodies admitted at once (each its declared length; one sent without a length counts its
   * route's limit); one account at most half of it. Past it a request is a 503 `server_busy` with Retry-After,
   * before its body is read. File uploads, streamed to the blob store, do not count. 0: no budget; else at least
   * twice the largest body limit above.
   */
  BODY_MEMORY_BUDGET_BYTES: z.coerce.number().int().min(0).default(256 * 1024 * 1024),
  /** Authenticated keys are cached this long; key-change events drop entries sooner. */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  /**
   * How long past its TTL a cached key is still served while the keys service cannot answer (down, or past
   * its deadline); never past the key's own expiry, and never after a key-change event for it. 0 disables.
   */
  AUTH_STALE_WINDOW_MS: z.coerce.number().int().min(0).default(5 * 60_000),
  /** How long the keys service's refusal of a key is remembered, so a flood of one bad key costs nothing downstream (0 disables). */
  AUTH_NEGATIVE_CACHE_TTL_MS: z.coerce.number().int().min(0).default(10_000),
  /** Most refused keys remembered at once (least recently seen forgotten first). */
  AUTH_NEGATIVE_CACHE_MAX: z.coerce.number().int().positive().default(10_000),
  /** Requests per minute of one API key (0: no limit). */
  RATE_LIMIT_KEY_RPM: z.coerce.number().int().min(0).default(0),
  /** Tokens per minute of one API key, counted from the usage of its finished calls (0: no limit). */
  RATE_LIMIT_KEY_TPM: z.coerce.number().int().min(0).default(0),
  /** Requests per minute of one account, all its keys together (0: no limit). */
  RATE_LIMIT_ACCOUNT_RPM: z.coerce.number().int().min(0).default(0),
  /** Tokens per minute of one account, all its keys together (0: no limit). */
  RATE_LIMIT_ACCOUNT_TPM: z.coerce.number().int().min(0).default(0),
  /**
   * Browser origins allowed to call the API cross-origin, comma-separated (`*` for any); empty: no CORS
   * headers, so browsers refuse cross-origin calls. Credentials (cookies) are never allowed: keys travel in
   * the Authorization header.
   */
  CORS_ALLOWED_ORIGINS: z.string().default('').transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean)),
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
}).superRefine((c, ctx) => {
  // An account may hold half the budget: less than one route's limit would refuse that route's largest bodies forever.
  const least = 2 * Math.max(c.BODY_LIMIT_BYTES, c.MEDIA_BODY_LIMIT_BYTES);
  if (c.BODY_MEMORY_BUDGET_BYTES !== 0 && c.BODY_MEMORY_BUDGET_BYTES < least) {
    ctx.addIssue({ code: 'custom', path: ['BODY_MEMORY_BUDGET_BYTES'], message: `must be 0 or at least ${least} (twice the larger of BODY_LIMIT_BYTES and MEDIA_BODY_LIMIT_BYTES)` });
  }
});

export type EdgeConfig = z.infer<typeof edgeConfigSchema>;
export const loadEdgeConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(edgeConfigSchema, env);
