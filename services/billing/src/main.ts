import { engineConfig } from '@gw/platform';
import { openEngines, runService } from '@gw/runtime';
import { startBillingService } from './app';
import { loadBillingConfig } from './config';

/** Billing as its own process: engines from the environment, graceful stop on SIGTERM/SIGINT. */
const config = loadBillingConfig();
void runService('billing', config.LOG_LEVEL, (logger) => openEngines(engineConfig(config, 'billing'), 'billing', logger),
  ({ store, bus }, logger) => startBillingService({ config, store, bus, logger }));
