import { join } from 'node:path';
import { bindHostEnv, bool, engineEnv, identitySecretEnv, loadConfig, port } from '@gw/platform';
import { z } from 'zod';

// SEED_ACCOUNTS is shared with billing, which reads the balance fields; keys reads only its own.
const seedAccount = z.object({
  id: z.string().min(1),
  /** Bootstrap management key secret; when absent a random one is made and shown once (see BOOTSTRAP_KEY_FILE). */
  management_key: z.string().min(1).optional(),
});

export type SeedAccount = z.infer<typeof seedAccount>;

const seedAccounts = z
  .string()
  .default('[{"id":"acct_local"}]')
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array of {id, management_key?}' });
      return z.NEVER;
    }
  })
  .pipe(z.array(seedAccount));

export const keysConfigSchema = z.object({
  KEYS_HTTP_PORT: port(8081),
  KEYS_GRPC_PORT: port(9081),
  BILLING_GRPC_ADDR: z.string().min(1).default('127.0.0.1:9082'),
  SEED_ACCOUNTS: seedAccounts,
  /** Owner-only file a standalone keys service writes generated bootstrap secrets to (default beside the data). */
  BOOTSTRAP_KEY_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** One log line per HTTP request (method, path, status, duration, trace id). */
  ACCESS_LOG: bool(false),
  ...engineEnv,
  ...identitySecretEnv,
  ...bindHostEnv,
});

export type KeysConfig = z.infer<typeof keysConfigSchema>;

export function loadKeysConfig(env: NodeJS.ProcessEnv = process.env): KeysConfig {
  return loadConfig(keysConfigSchema, env);
}

export function bootstrapKeyFile(config: Pick<KeysConfig, 'BOOTSTRAP_KEY_FILE' | 'DATA_DIR'>): string {
  return config.BOOTSTRAP_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'bootstrap-management-keys.txt');
}
