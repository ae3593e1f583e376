import { engineConfig } from '@gw/platform';
import { runService } from '@gw/runtime';
import { startInferenceService } from './app';
import { loadInferenceConfig } from './config';

const config = loadInferenceConfig();
void runService('inference', engineConfig(config, 'inference'), config.LOG_LEVEL,
  ({ store, bus }, logger) => startInferenceService({ config, store, bus, logger }));
