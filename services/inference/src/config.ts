import * as path from 'node:path';
import { z } from 'zod';
import { engineEnv, loadConfig, port } from '@gw/platform';

export const inferenceConfigSchema = z.object({
  INFERENCE_HTTP_PORT: port(8083),
  CATALOG_FILE: z.string().default(path.resolve(__dirname, '../../../config/catalog.json')),
  BILLING_GRPC_ADDR: z.string().default('127.0.0.1:9082'),
  /** A cached balance older than this is refreshed in the background (events keep it fresh normally). */
  BALANCE_REFRESH_MS: z.coerce.number().int().positive().default(5_000),
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(4 * 1024 * 1024),
  /** Linger of the usage-event batcher: events leave in batches, off the response path. */
  USAGE_LINGER_MS: z.coerce.number().int().min(0).default(5),
  /** How long a stream whose client went away is still read to learn (and bill) what was generated. */
  ABANDONED_STREAM_DRAIN_MS: z.coerce.number().int().min(0).default(30_000),
  LOG_LEVEL: z.string().default('info'),
  ...engineEnv,
});

export type InferenceConfig = z.infer<typeof inferenceConfigSchema>;
export const loadInferenceConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig(inferenceConfigSchema, env);
