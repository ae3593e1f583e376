import { access } from 'node:fs/promises';
import * as path from 'node:path';
import { startService, type Logger, type RunningService } from '@gw/platform';
import type { ConsoleConfig } from './config';
import { consoleRoutes } from './static-routes';

export interface ConsoleServiceOptions {
  config: Pick<ConsoleConfig, 'CONSOLE_HTTP_PORT' | 'CONSOLE_STATIC_DIR' | 'GATEWAY_IDENTITY_SECRET' | 'BIND_HOST'> & Partial<Pick<ConsoleConfig, 'ACCESS_LOG'>>;
  logger: Logger;
}

// The console's requests are page loads: no body is read.
const BODY_LIMIT_BYTES = 1024;

/**
 * The web console's static files, behind the edge (no public port of its own). It holds no state and calls
 * nothing: the browser calls the public API with the signed-in key. Ready once the build is present.
 */
export async function startConsoleService({ config, logger }: ConsoleServiceOptions): Promise<RunningService> {
  const indexFile = path.join(config.CONSOLE_STATIC_DIR, 'index.html');
  return startService({
    name: 'console', logger, host: config.BIND_HOST, httpPort: config.CONSOLE_HTTP_PORT,
    identitySecret: config.GATEWAY_IDENTITY_SECRET, bodyLimitBytes: BODY_LIMIT_BYTES, accessLog: config.ACCESS_LOG,
  }, async ({ health }) => {
    health.addCheck('build', () => access(indexFile).then(() => true));
    return { routes: [consoleRoutes(config.CONSOLE_STATIC_DIR)] };
  });
}
