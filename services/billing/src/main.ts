import { createLogger, engineConfig, installShutdown } from '@gw/platform';
import { createBus } from '@gw/bus';
import { createStore } from '@gw/store';
import { startBillingService } from './app';
import { loadBillingConfig } from './config';

/** Billing as its own process: engines from the environment, graceful stop on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadBillingConfig();
  const logger = createLogger('billing', config.LOG_LEVEL);
  const engines = engineConfig(config, 'billing');
  const store = createStore(engines.store);
  const bus = createBus(engines.bus.engine === 'kafka' ? { ...engines.bus, clientId: 'billing' } : { engine: 'embedded', store }, logger);
  const service = await startBillingService({ config, store, bus, logger });
  installShutdown(logger, [
    { name: 'billing', run: () => service.stop() },
    { name: 'bus', run: () => bus.close() },
    { name: 'store', run: () => store.close() },
  ]);
}

main().catch((err: unknown) => {
  // The logger may not exist yet (invalid configuration), so the reason goes straight to stderr.
  console.error(err);
  process.exit(1);
});
