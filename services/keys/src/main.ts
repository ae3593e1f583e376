import { engineConfig } from '@gw/platform';
import { openEngines, runService } from '@gw/runtime';
import { startKeysService } from './app';
import { writeToOwnerOnlyFile } from './bootstrap-key-file';
import { bootstrapKeyFile, loadKeysConfig } from './config';

/** The keys service as its own process (one pod); engines from STORE / BUS. */
const config = loadKeysConfig();
void runService('keys', config.LOG_LEVEL, (logger) => openEngines(engineConfig(config, 'keys'), 'keys', logger),
  ({ store, bus }, logger) => startKeysService({ config, store, bus, logger, announce: writeToOwnerOnlyFile(bootstrapKeyFile(config), logger) }));
