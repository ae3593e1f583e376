import { engineConfig } from '@gw/platform';
import { runService } from '@gw/runtime';
import { startEdge } from './app';
import { loadEdgeConfig } from './config';

const config = loadEdgeConfig();
void runService('edge', engineConfig(config, 'edge'), config.LOG_LEVEL, ({ bus }, logger) => startEdge({ config, bus, logger }));
