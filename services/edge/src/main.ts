import { engineConfig } from '@gw/platform';
import { openBusOnly, openEngines, runService } from '@gw/runtime';
import { startEdge } from './app';
import { loadEdgeConfig } from './config';

const config = loadEdgeConfig();
const engines = engineConfig(config, 'edge');
// In the distributed mode the edge's rate-limit counters live in the shared store, so every replica counts
// against the same budgets; otherwise the edge owns no data and keeps them in memory.
if (engines.store.engine === 'mongo') {
  void runService('edge', config.LOG_LEVEL, (logger) => openEngines(engines, 'edge', logger),
    ({ bus, store }, logger) => startEdge({ config, bus, store, logger }));
} else {
  void runService('edge', config.LOG_LEVEL, (logger) => openBusOnly(engines, 'edge', logger),
    ({ bus }, logger) => startEdge({ config, bus, logger }));
}
