import { bindHostEnv, bool, engineEnv, identitySecretEnv, loadConfig, port } from '@gw/platform';
import { outboundGuardEnv } from '@gw/net-guard';
import { z } from 'zod';

const ms = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const webhooksConfigSchema = z.object({
  WEBHOOKS_HTTP_PORT: port(8086),
  /**
   * Key (at least 32 bytes) the accounts' signing secrets are encrypted under in the store, so a copy of the
   * database alone cannot sign. Unset: derived from GATEWAY_IDENTITY_SECRET (rotating that one then makes
   * existing signing secrets unreadable: accounts rotate them).
   */
  WEBHOOK_SECRETS_KEY: z.string().refine((s) => Buffer.byteLength(s, 'utf8') >= 32, 'must be at least 32 bytes').optional(),
  /** Test-only: a PEM file of extra CA certificates trusted for deliveries (a test receiver's self-signed one). */
  WEBHOOKS_EXTRA_CA_FILE: z.string().min(1).optional(),
  /** Concurrent deliveries per instance. */
  WEBHOOKS_WORKERS: z.coerce.number().int().min(0).default(4),
  /** A delivery's lease: another instance takes over a delivery whose worker died once it lapses. */
  WEBHOOKS_LEASE_MS: ms(15_000),
  WEBHOOKS_POLL_MS: ms(500),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** One log line per HTTP request (method, path, status, duration, trace id). */
  ACCESS_LOG: bool(false),
  ...engineEnv,
  ...identitySecretEnv,
  ...bindHostEnv,
  ...outboundGuardEnv,
});

export type WebhooksConfig = z.infer<typeof webhooksConfigSchema>;

export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  return loadConfig(webhooksConfigSchema, env);
}
