import { createLogger, engineConfig, installShutdown } from '@gw/platform';
import { createBus } from '@gw/bus';
import { createStore } from '@gw/store';
import { startKeysService } from './app';
import { loadKeysConfig } from './config';

/** The keys service as its own process (one pod); engines from STORE / BUS. */
async function main(): Promise<void> {
  const config = loadKeysConfig();
  const logger = createLogger('keys', config.LOG_LEVEL);
  const engines = engineConfig(config, 'keys');
  const store = await createStore(engines.store);
  const bus = createBus(engines.bus.engine === 'kafka' ? { ...engines.bus, clientId: 'keys' } : { engine: 'embedded', store }, logger);
  const service = await startKeysService({ config, store, bus, logger });
  installShutdown(logger, [
    { name: 'keys service', run: () => service.stop() },
    { name: 'bus', run: () => bus.close() },
    { name: 'store', run: () => store.close() },
  ]);
}

main().catch((err) => {
  // The logger may not exist yet (bad configuration): report on stderr and exit non-zero.
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
