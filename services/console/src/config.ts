import * as path from 'node:path';
import { z } from 'zod';
import { bindHostEnv, bool, identitySecretEnv, loadConfig, port } from '@gw/platform';

export const consoleConfigSchema = z.object({
  CONSOLE_HTTP_PORT: port(8087),
  /** The built web console (`pnpm --filter @gw/console build`); served under `/console/` behind the edge. */
  CONSOLE_STATIC_DIR: z.string().min(1).default(path.resolve(__dirname, '../dist')),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** One log line per HTTP request (method, path, status, duration, trace id). */
  ACCESS_LOG: bool(false),
  ...identitySecretEnv,
  ...bindHostEnv,
});

export type ConsoleConfig = z.infer<typeof consoleConfigSchema>;

export function loadConsoleConfig(env: NodeJS.ProcessEnv = process.env): ConsoleConfig {
  return loadConfig(consoleConfigSchema, env);
}
