import type { Server } from 'node:http';
import {
  closeServer, createHttpApp, finishHttpApp, GrpcCallAuthenticator, Health, IdentityVerifier, listen, Metrics, type GrpcServerHandle, type Logger, type RunningService,
} from '@gw/platform';
import type { Bus } from '@gw/bus';
import type { Store } from '@gw/store';
import { PriceBook, readCatalog } from '@gw/catalog';
import { accountsCollection, ensureSeedAccounts } from './accounts';
import { KeysApiKeyAccounts } from './api-key-accounts';
import { BillingService } from './billing-service';
import type { BillingConfig } from './config';
import { startBillingGrpcServer } from './grpc-server';
import { billingRoutes } from './http-routes';
import { ensureLedgerIndexes, ledgerCollection } from './ledger';
import { SpendHolds } from './spend-holds';
import { startUsageConsumer } from './usage-consumer';

export interface BillingServiceDeps {
  config: BillingConfig;
  store: Store;
  bus: Bus;
  logger: Logger;
  /** Clock for key-spend periods; tests pin it. */
  now?: () => Date;
}

/** Starts billing on engines the caller owns (and closes): indexes, seed accounts, the usage consumer, HTTP and gRPC. */
export async function startBillingService({ config, store, bus, logger, now = () => new Date() }: BillingServiceDeps): Promise<RunningService> {
  const priceBook = PriceBook.fromCatalog(readCatalog(config.CATALOG_FILE));
  await ensureLedgerIndexes(ledgerCollection(store));
  await ensureSeedAccounts(accountsCollection(store), config.SEED_ACCOUNTS, logger, now().getTime());

  const metrics = new Metrics('billing');
  // The API needs only the store; usage waits durably in the bus until the consumer (re)joins its group.
  const consumer = startUsageConsumer({ store, bus, priceBook, logger, now, maxBatch: config.USAGE_BATCH_MAX });
  const health = new Health({ logger, metrics })
    .addCheck('store', () => store.ping())
    .addCheck('bus', () => bus.ping(), 'degraded')
    .addCheck('usage-consumer', async () => consumer.joined(), 'degraded');
  const billing = new BillingService(store, now);
  const holds = new SpendHolds(store, priceBook, { allowanceMicros: config.SPEND_OVERDRAFT_ALLOWANCE_USD, holdTtlMs: config.SPEND_HOLD_TTL_MS }, logger, now);
  const sweeper = setInterval(() => {
    holds.sweepExpired().catch((err: unknown) => logger.warn({ err }, 'spend hold sweep failed; retrying on the next tick'));
  }, config.SPEND_HOLD_SWEEP_MS);
  sweeper.unref();

  // HTTP and gRPC share one verifier (one replay memory); gRPC also takes API keys, checked by keys.
  const verifier = new IdentityVerifier(config.GATEWAY_IDENTITY_SECRET);
  const apiKeys = new KeysApiKeyAccounts(config.KEYS_GRPC_ADDR);
  const auth = new GrpcCallAuthenticator(verifier, apiKeys);
  const app = createHttpApp({ logger, health, metrics, bodyLimitBytes: 64 * 1024, identity: verifier, accessLog: config.ACCESS_LOG });
  app.use(billingRoutes(billing));
  finishHttpApp(app, logger);

  // A port in use must not leave a consumer running in a process that is about to report failure.
  const { grpc, http } = await startServers({ app, billing, holds, auth, health, logger, config }).catch(async (err: unknown) => {
    clearInterval(sweeper);
    await consumer.stop();
    apiKeys.close();
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
        clearInterval(sweeper);
        await Promise.all([closeServer(http), grpc.shutdown()]);
        await consumer.stop();
        apiKeys.close();
        logger.info('billing service stopped');
      })();
      return stopping;
    },
  };
}

async function startServers(opts: {
  app: Parameters<typeof listen>[0]; billing: BillingService; holds: SpendHolds; auth: GrpcCallAuthenticator; health: Health; logger: Logger; config: BillingConfig;
}): Promise<{ grpc: GrpcServerHandle; http: Server }> {
  const host = opts.config.BIND_HOST;
  const grpc = await startBillingGrpcServer({ billing: opts.billing, holds: opts.holds, auth: opts.auth, health: opts.health, logger: opts.logger, port: opts.config.BILLING_GRPC_PORT, host });
  try {
    return { grpc, http: await listen(opts.app, opts.config.BILLING_HTTP_PORT, host) };
  } catch (err) {
    await grpc.shutdown(0);
    throw err;
  }
}
