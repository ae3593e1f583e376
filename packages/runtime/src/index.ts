import { createBus, type Bus } from '@gw/bus';
import { createStore, WalCheckpointer, type Store } from '@gw/store';
import { createLogger, installShutdown, startTracing, type EngineConfig, type Logger, type RunningService } from '@gw/platform';

export interface Closeable {
  close(): Promise<void>;
}

export interface Engines extends Closeable {
  store: Store;
  bus: Bus;
}

/** Opens the store and bus a service's configuration selects (the embedded bus lives in the store). */
export async function openEngines(cfg: EngineConfig, clientId: string, logger: Logger): Promise<Engines> {
  // The embedded store's WAL checkpoints run on a thread of their own, off the event loop.
  const checkpointer = cfg.store.engine === 'embedded' ? new WalCheckpointer({ logger: logger.child({ component: 'wal-checkpointer' }) }) : undefined;
  const store = createStore(cfg.store.engine === 'embedded' ? { ...cfg.store, checkpointer } : cfg.store, logger);
  const bus = cfg.bus.engine === 'kafka'
    ? createBus({ engine: 'kafka', brokers: cfg.bus.brokers, clientId, namespace: cfg.bus.namespace }, logger)
    : createBus({ engine: 'embedded', store }, logger);
  return { store, bus, close: async () => { await bus.close(); await store.close(); await checkpointer?.close(); } };
}

/** For a service that owns no data (the edge): a store is opened only when the embedded bus needs one. */
export async function openBusOnly(cfg: EngineConfig, clientId: string, logger: Logger): Promise<Closeable & { bus: Bus }> {
  if (cfg.bus.engine === 'kafka') {
    const bus = createBus({ engine: 'kafka', brokers: cfg.bus.brokers, clientId, namespace: cfg.bus.namespace }, logger);
    return { bus, close: () => bus.close() };
  }
  return openEngines(cfg, clientId, logger);
}

/**
 * The standalone process shape every service's main.ts shares: open engines, start, and on SIGTERM stop the
 * service first (in-flight work finishes, leases are released) and then close the engines.
 */
export async function runService<E extends Closeable>(
  name: string,
  logLevel: string,
  open: (logger: Logger) => Promise<E>,
  start: (engines: E, logger: Logger) => Promise<RunningService>,
): Promise<void> {
  const logger = createLogger(name, logLevel);
  try {
    // Before anything serves, so every span has the exporter; off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
    const tracing = startTracing(name);
    const engines = await open(logger);
    const service = await start(engines, logger);
    installShutdown(logger, [
      { name: 'service', run: () => service.stop() },
      { name: 'engines', run: () => engines.close() },
      ...(tracing ? [{ name: 'tracing', run: () => tracing.shutdown() }] : []),
    ]);
    logger.info({ httpPort: service.httpPort, grpcPort: service.grpcPort }, `${name} started`);
  } catch (err) {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  }
}
