import type { Server } from 'node:http';
import { closeServer, createHttpApp, finishHttpApp, Health, listen, Metrics, type GrpcServerHandle, type Logger, type RunningService } from '@gw/platform';
import type { Bus } from '@gw/bus';
import type { Store } from '@gw/store';
import { readCatalog } from '@gw/catalog';
import { accountsCollection, ensureSeedAccounts } from './accounts';
import { BillingService } from './billing-service';
import type { BillingConfig } from './config';
import { startBillingGrpcServer } from './grpc-server';
import { billingRoutes } from './http-routes';
import { ensureLedgerIndexes, ledgerCollection } from './ledger';
import { PriceBook } from './pricing';
import { startUsageConsumer } from './usage-consumer';

export interface BillingServiceDeps {
  config: BillingConfig;
  store: Store;
  bus: Bus;
  logger: Logger;
  /** Clock for key-spend periods; tests pin it. */
  now?: () => Date;
  /** Bind address of both servers; default all interfaces. */
  host?: string;
}

/** Starts billing on engines the caller owns (and closes): indexes, seed accounts, the usage consumer, HTTP and gRPC. */
export async function startBillingService({ config, store, bus, logger, now = () => new Date(), host }: BillingServiceDeps): Promise<RunningService> {
  const priceBook = PriceBook.fromCatalog(readCatalog(config.CATALOG_FILE));
  await ensureLedgerIndexes(ledgerCollection(store));
  await ensureSeedAccounts(accountsCollection(store), config.SEED_ACCOUNTS, logger, now().getTime());

  const health = new Health().addCheck('store', () => store.ping()).addCheck('bus', () => bus.ping());
  const metrics = new Metrics('billing');
  const billing = new BillingService(store, now);

  const consumer = await startUsageConsumer({ store, bus, priceBook, logger, now, maxBatch: config.USAGE_BATCH_MAX });
  const app = createHttpApp({ logger, health, metrics, bodyLimitBytes: 64 * 1024, accessLog: config.ACCESS_LOG });
  app.use(billingRoutes(billing));
  finishHttpApp(app, logger);

  // A port in use must not leave a consumer running in a process that is about to report failure.
  const { grpc, http } = await startServers({ app, billing, health, logger, config, host }).catch(async (err: unknown) => {
    await consumer.stop();
    throw err;
  });
  const httpPort = (http.address() as { port: number }).port;
  logger.info({ httpPort, grpcPort: grpc.port, store: store.engine, bus: bus.engine }, 'billing service started');

  let stopping: Promise<void> | null = null;
  return {
    name: 'billing',
    httpPort,
    grpcPort: grpc.port,
    health,
    stop: () => {
      stopping ??= (async () => {
        health.startDraining();
        await Promise.all([closeServer(http), grpc.shutdown()]);
        await consumer.stop();
        logger.info('billing service stopped');
      })();
      return stopping;
    },
  };
}

async function startServers(opts: {
  app: Parameters<typeof listen>[0]; billing: BillingService; health: Health; logger: Logger; config: BillingConfig; host?: string;
}): Promise<{ grpc: GrpcServerHandle; http: Server }> {
  const grpc = await startBillingGrpcServer({ billing: opts.billing, health: opts.health, logger: opts.logger, port: opts.config.BILLING_GRPC_PORT, host: opts.host });
  try {
    return { grpc, http: await listen(opts.app, opts.config.BILLING_HTTP_PORT, opts.host) };
  } catch (err) {
    await grpc.shutdown(0);
    throw err;
  }
}
