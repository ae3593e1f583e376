import { runService } from '@gw/runtime';
import { startConsoleService } from './app';
import { loadConsoleConfig } from './config';

/** The console's static server as its own process (one pod); it opens no engines. */
const config = loadConsoleConfig();
void runService('console', config.LOG_LEVEL, async () => ({ close: async () => {} }),
  (_engines, logger) => startConsoleService({ config, logger }));
