import { z } from 'zod';
import { engineEnv, loadConfig, port, bool } from '@gw/platform';

export const edgeConfigSchema = z.object({
  EDGE_PORT: port(8080),
  /** Probes and /metrics live on their own port, never on the public one. */
  EDGE_ADMIN_PORT: port(9080),
  KEYS_GRPC_ADDR: z.string().default('127.0.0.1:9081'),
  KEYS_HTTP_URL: z.string().url().default('http://127.0.0.1:8081'),
  BILLING_HTTP_URL: z.string().url().default('http://127.0.0.1:8082'),
  INFERENCE_HTTP_URL: z.string().url().default('http://127.0.0.1:8083'),
  /** Largest request body accepted, in bytes. */
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  /** Authenticated keys are cached this long; key-change events drop entries sooner. */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(30_000),
  LOG_LEVEL: z.string().default('info'),
  /** One log line per HTTP request (method, path, status, duration, trace id). */
  ACCESS_LOG: bool(false),
  ...engineEnv,
});

export type EdgeConfig = z.infer<typeof edgeConfigSchema>;
export const loadEdgeConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(edgeConfigSchema, env);
