import { createBus, type Bus } from '@gw/bus';
import { createStore, type Store } from '@gw/store';
import { createLogger, installShutdown, type EngineConfig, type Logger, type RunningService } from '@gw/platform';

export interface Engines {
  store: Store;
  bus: Bus;
  close(): Promise<void>;
}

/** Opens the store and bus a service's configuration selects (the embedded bus lives in the store). */
export async function openEngines(cfg: EngineConfig, clientId: string, logger: Logger): Promise<Engines> {
  const store = createStore(cfg.store);
  const bus = cfg.bus.engine === 'kafka'
    ? createBus({ engine: 'kafka', brokers: cfg.bus.brokers, clientId }, logger)
    : createBus({ engine: 'embedded', store }, logger);
  return {
    store,
    bus,
    close: async () => {
      await bus.close();
      await store.close();
    },
  };
}

/**
 * The standalone process shape every service's main.ts shares: engines, start, graceful shutdown
 * (stop the service first so in-flight work finishes, then close the engines).
 */
export async function runService(
  name: string,
  engineCfg: EngineConfig,
  logLevel: string,
  start: (engines: Engines, logger: Logger) => Promise<RunningService>,
): Promise<void> {
  const logger = createLogger(name, logLevel);
  try {
    const engines = await openEngines(engineCfg, name, logger);
    const service = await start(engines, logger);
    installShutdown(logger, [
      { name: 'service', run: () => service.stop() },
      { name: 'engines', run: () => engines.close() },
    ]);
    logger.info({ httpPort: service.httpPort, grpcPort: service.grpcPort, store: engines.store.engine, bus: engines.bus.engine }, `${name} started`);
  } catch (err) {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  }
}
