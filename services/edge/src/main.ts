import { engineConfig } from '@gw/platform';
import { openBusOnly, runService } from '@gw/runtime';
import { startEdge } from './app';
import { loadEdgeConfig } from './config';

const config = loadEdgeConfig();
void runService('edge', config.LOG_LEVEL, (logger) => openBusOnly(engineConfig(config, 'edge'), 'edge', logger),
  ({ bus }, logger) => startEdge({ config, bus, logger }));
