import { z } from 'zod';
import { usdToMicros } from './money';

/**
 * Typed configuration from the environment. Every service declares one zod schema; `loadConfig` validates
 * it once at startup and fails with every offending variable named, so a misconfigured pod never starts.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/** A decimal string (or number as written in JSON) with at most 6 decimals, kept as integer millionths. */
export const millionths = (what: string) =>
  z.union([z.string(), z.number()]).transform((value, ctx) => {
    try {
      const micros = usdToMicros(value);
      if (micros < 0) throw new RangeError('negative');
      return micros;
    } catch {
      ctx.addIssue({ code: 'custom', message: `${what} must be a non-negative decimal with at most 6 decimals` });
      return z.NEVER;
    }
  });

export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
export const bool = (fallback: boolean) =>
  z.enum(['true', 'false', '1', '0']).default(fallback ? 'true' : 'false').transform((v) => v === 'true' || v === '1');

/** Engine selection shared by every service that owns data: the store and bus ports. */
export const engineEnv = {
  STORE: z.enum(['embedded', 'mongo']).default('embedded'),
  DATA_DIR: z.string().default('./data'),
  MONGO_URL: z.string().optional(),
  /** How long a MongoDB operation waits on a silent server before checking it is alive; a hung one refuses the call (503) in about twice this. */
  STORE_OP_TIMEOUT_MS: z.coerce.number().int().positive().default(2_000),
  /** A file the embedded store appends every filtered read to that scans a whole collection (a diagnostic; off when unset). */
  STORE_SCAN_REPORT_FILE: z.string().min(1).optional(),
  BUS: z.enum(['embedded', 'kafka']).default('embedded'),
  KAFKA_BROKERS: z.string().optional(),
  /** Prefix of every Kafka topic and consumer group, so several deployments can share one cluster. */
  BUS_NAMESPACE: z.string().regex(/^[a-zA-Z0-9_-]*$/, 'letters, digits, _ and - only').default(''),
};

export type EngineConfig =
  | { store: { engine: 'embedded'; dataDir: string; scanReportFile?: string } | { engine: 'mongo'; url: string; opTimeoutMs?: number } }
  & { bus: { engine: 'embedded' } | { engine: 'kafka'; brokers: string[]; namespace: string } };

/** Resolves the engine variables into port configuration, refusing a distributed engine without its URL. */
export function engineConfig(env: { STORE: 'embedded' | 'mongo'; DATA_DIR: string; MONGO_URL?: string; STORE_OP_TIMEOUT_MS?: number; STORE_SCAN_REPORT_FILE?: string; BUS: 'embedded' | 'kafka'; KAFKA_BROKERS?: string; BUS_NAMESPACE?: string }, service: string): EngineConfig {
  if (env.STORE === 'mongo' && !env.MONGO_URL) throw new Error('Invalid configuration: MONGO_URL is required when STORE=mongo');
  if (env.BUS === 'kafka' && !env.KAFKA_BROKERS) throw new Error('Invalid configuration: KAFKA_BROKERS is required when BUS=kafka');
  return {
    store: env.STORE === 'mongo' ? { engine: 'mongo', url: env.MONGO_URL!, opTimeoutMs: env.STORE_OP_TIMEOUT_MS } : { engine: 'embedded', dataDir: `${env.DATA_DIR}/${service}`, scanReportFile: env.STORE_SCAN_REPORT_FILE },
    bus: env.BUS === 'kafka'
      ? { engine: 'kafka', brokers: env.KAFKA_BROKERS!.split(',').map((b) => b.trim()).filter(Boolean), namespace: env.BUS_NAMESPACE ?? '' }
      : { engine: 'embedded' },
  };
}

/**
 * `GATEWAY_IDENTITY_SECRET`: the HMAC key of the signed identity tokens, shared by every service and known to
 * nothing else. Required: a service without it cannot tell the edge from anyone else.
 */
export const identitySecretEnv = {
  GATEWAY_IDENTITY_SECRET: z.string().refine((s) => Buffer.byteLength(s, 'utf8') >= 32, 'must be at least 32 bytes (e.g. `openssl rand -base64 48`)'),
};

/** `BIND_HOST`: the interface a service's internal and admin ports listen on; loopback unless a deployment opens it. */
export const bindHostEnv = {
  BIND_HOST: z.string().min(1).default('127.0.0.1'),
};
