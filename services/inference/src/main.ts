import { engineConfig } from '@gw/platform';
import { openEngines, runService } from '@gw/runtime';
import { startInferenceService } from './app';
import { loadInferenceConfig } from './config';

const config = loadInferenceConfig();
void runService('inference', config.LOG_LEVEL, (logger) => openEngines(engineConfig(config, 'inference'), 'inference', logger),
  ({ store, bus }, logger) => startInferenceService({ config, store, bus, logger }));
