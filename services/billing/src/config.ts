import * as path from 'node:path';
import { z } from 'zod';
import { bindHostEnv, bool, engineEnv, identitySecretEnv, loadConfig, millionths, port } from '@gw/platform';


export const seedAccountSchema = z.object({
  id: z.string().min(1),
  wallet_usd: millionths('wallet_usd').default(0),
  credit_usd: millionths('credit_usd').default(0),
  /** "0.8" = 20% off list price; parts per million once parsed. */
  price_factor: millionths('price_factor').default(1_000_000),
});

export interface SeedAccount {
  id: string;
  walletMicros: number;
  creditMicros: number;
  priceFactorPpm: number;
}

const seedAccounts = z
  .string()
  .default('[{"id":"acct_local","credit_usd":"100"}]')
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array' });
      return z.NEVER;
    }
  })
  .pipe(z.array(seedAccountSchema))
  .transform((items): SeedAccount[] =>
    items.map((a) => ({ id: a.id, walletMicros: a.wallet_usd, creditMicros: a.credit_usd, priceFactorPpm: a.price_factor })),
  );

/** The repository's catalogue, found from this file so the service starts from any working directory. */
export const DEFAULT_CATALOG_FILE = path.resolve(__dirname, '../../../config/catalog.json');

export const billingConfigSchema = z.object({
  BILLING_HTTP_PORT: port(8082),
  BILLING_GRPC_PORT: port(9082),
  /** Keys' `Authenticate`, for gRPC callers that present an API key. */
  KEYS_GRPC_ADDR: z.string().min(1).default('127.0.0.1:9081'),
  CATALOG_FILE: z.string().default(DEFAULT_CATALOG_FILE),
  SEED_ACCOUNTS: seedAccounts,
  USAGE_BATCH_MAX: z.coerce.number().int().min(1).max(10_000).default(500),
  /**
   * How long a usage event, an archive record or a failed call may wait for others to join its batch: each batch
   * costs a few store writes whatever its size, so a busy gateway writes fewer, larger ones. Balances and
   * statistics trail the calls by at most this much more; spend limits hold through the calls' holds.
   */
  USAGE_BATCH_WAIT_MS: z.coerce.number().int().min(0).max(5_000).default(50),
  /** The most a burst of calls may take past an account's balance or a key's limit (USD), see spend-holds.ts. */
  SPEND_OVERDRAFT_ALLOWANCE_USD: millionths('SPEND_OVERDRAFT_ALLOWANCE_USD').default(1_000),
  /** A spend hold that no usage settled is dropped after this (the call's instance died without reporting). */
  SPEND_HOLD_TTL_MS: z.coerce.number().int().positive().default(60 * 60_000),
  SPEND_HOLD_SWEEP_MS: z.coerce.number().int().positive().default(60_000),
  /** Archived calls (bodies and metadata) are kept this many days, then swept. */
  ARCHIVE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  ARCHIVE_SWEEP_MS: z.coerce.number().int().positive().default(10 * 60_000),
  LOG_LEVEL: z.string().default('info'),
  /** One log line per HTTP request (method, path, status, duration, trace id). */
  ACCESS_LOG: bool(false),
  ...engineEnv,
  ...identitySecretEnv,
  ...bindHostEnv,
});

export type BillingConfig = z.infer<typeof billingConfigSchema>;

export function loadBillingConfig(env: NodeJS.ProcessEnv = process.env): BillingConfig {
  return loadConfig(billingConfigSchema, env);
}
