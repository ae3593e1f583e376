import { engineConfig } from '@gw/platform';
import { openEngines, runService } from '@gw/runtime';
import { startWebhooksService } from './app';
import { loadWebhooksConfig } from './config';

/** The webhooks service as its own process (one pod); engines from STORE / BUS. */
const config = loadWebhooksConfig();
void runService('webhooks', config.LOG_LEVEL, (logger) => openEngines(engineConfig(config, 'webhooks'), 'webhooks', logger),
  ({ store, bus }, logger) => startWebhooksService({ config, store, bus, logger }));
