import { KeysApiKeyAccounts, startService, type Logger, type RunningService } from '@gw/platform';
import { billingProto, TOPICS } from '@gw/proto';
import type { BlobStore } from '@gw/blobs';
import { subscribeInBackground, type Bus } from '@gw/bus';
import type { Store } from '@gw/store';
import { PriceBook, readCatalog } from '@gw/catalog';
import { accountsCollection, ensureAccountIndexes, ensureSeedAccounts } from './accounts';
import { BillingService } from './billing-service';
import type { BillingConfig } from './config';
import { billingGrpcHandlers } from './grpc-server';
import { billingRoutes } from './http-routes';
import { ensureLedgerIndexes, ledgerCollection } from './ledger';
import { writeKeyHolderRows } from './key-holders';
import { moveMediaIdsToRows } from './ledger-media';
import { SpendHolds } from './spend-holds';
import { startUsageConsumer, USAGE_CONSUMER_GROUP } from './usage-consumer';
import { ensureUsageStatsIndexes, pruneCountedPostings, usageStatsCollection } from './stats/usage-stats';
import { createFailedCallsHandler, ensureFailedCallIndexes, failedCallsCollection, sweepFailedCalls } from './stats/failed-calls';
import { ARCHIVE_BATCH, CallArchive } from './archive/call-archive';
import { FinishedPostings } from './finished-postings';

export const ARCHIVE_CONSUMER_GROUP = 'billing-archive';
export const FAILED_CALLS_CONSUMER_GROUP = 'billing-call-failures';
/**
 * How often statistics rows drop the marks of settled postings. Each posting's write rewrites its row whole
 * (on the embedded store), so a row must stay a few seconds' marks long, not a minute's (about 1,000 at 1,000
 * calls/s, 50 KB rewritten per posting).
 */
const STATS_PRUNE_EVERY_MS = 2_000;
const FAILED_CALLS_SWEEP_EVERY_MS = 60_000;

export interface BillingServiceDeps {
  config: BillingConfig;
  store: Store;
  bus: Bus;
  /** The archived calls' bodies; the caller owns (and closes) it, like the store. */
  blobs: BlobStore;
  logger: Logger;
  /** Clock for key-spend periods; tests pin it. */
  now?: () => Date;
}

/** Starts billing on engines the caller owns (and closes): indexes, seed accounts, the usage consumer, HTTP and gRPC. */
export async function startBillingService({ config, store, bus, blobs, logger, now = () => new Date() }: BillingServiceDeps): Promise<RunningService> {
  return startService({
    name: 'billing', logger, host: config.BIND_HOST, httpPort: config.BILLING_HTTP_PORT, grpcPort: config.BILLING_GRPC_PORT,
    identitySecret: config.GATEWAY_IDENTITY_SECRET, bodyLimitBytes: 64 * 1024, accessLog: config.ACCESS_LOG,
  }, async ({ health, metrics, background, client, grpcAuthenticator }) => {
    const priceBook = PriceBook.fromCatalog(readCatalog(config.CATALOG_FILE));
    await ensureLedgerIndexes(ledgerCollection(store));
    await moveMediaIdsToRows(store, ledgerCollection(store), logger, now().getTime());
    await writeKeyHolderRows(store, accountsCollection(store), logger, now().getTime());
    const stats = usageStatsCollection(store);
    await ensureUsageStatsIndexes(stats);
    const failedCalls = failedCallsCollection(store);
    await ensureFailedCallIndexes(failedCalls);
    // What the consumers marked applied, so the pruner drops their marks without looking each posting up.
    const finishedPostings = new FinishedPostings();
    // One pass at a time: a slow pass (the MongoDB store under load) skips ticks rather than stacking them.
    let pruning = false;
    const statsPruner = setInterval(() => {
      if (pruning) return;
      pruning = true;
      pruneCountedPostings(stats, [ledgerCollection(store), failedCalls], finishedPostings)
        .catch((err: unknown) => logger.warn({ err }, 'statistics prune failed; retrying on the next tick'))
        .finally(() => { pruning = false; });
    }, STATS_PRUNE_EVERY_MS);
    statsPruner.unref();
    background('stats-pruner', { stop: async () => clearInterval(statsPruner) });
    const failedCallsSweeper = setInterval(() => {
      sweepFailedCalls(failedCalls, now().getTime()).catch((err: unknown) => logger.warn({ err }, 'failed-calls sweep failed; retrying on the next tick'));
    }, FAILED_CALLS_SWEEP_EVERY_MS);
    failedCallsSweeper.unref();
    background('failed-calls-sweeper', { stop: async () => clearInterval(failedCallsSweeper) });
    await ensureAccountIndexes(accountsCollection(store));
    await ensureSeedAccounts(accountsCollection(store), config.SEED_ACCOUNTS, logger, now().getTime());

    // The API needs only the store; usage waits durably in the bus until the consumer (re)joins its group.
    const consumer = background('usage-consumer', startUsageConsumer({ store, bus, priceBook, logger, now, maxBatch: config.USAGE_BATCH_MAX, fetchWaitMs: config.USAGE_BATCH_WAIT_MS, metrics, finishedPostings }));
    health
      .addCheck('store', () => store.ping())
      .addCheck('bus', () => bus.ping(), 'degraded')
      .addCheck('usage-consumer', async () => consumer.joined(), 'degraded');
    const archive = new CallArchive(store, blobs, { retentionDays: config.ARCHIVE_RETENTION_DAYS }, logger, now);
    await archive.ensureIndexes();
    const archiveConsumer = background('archive-consumer', subscribeInBackground(bus, {
      topics: [TOPICS.archive], group: ARCHIVE_CONSUMER_GROUP, ...ARCHIVE_BATCH, fetchWaitMs: config.USAGE_BATCH_WAIT_MS,
      handleBatch: (messages) => archive.handleBatch(messages),
    }, logger));
    health.addCheck('archive-consumer', async () => archiveConsumer.joined(), 'degraded');
    // Calls that failed without usage: counted in the statistics, a batch at a time.
    const failuresConsumer = background('call-failures-consumer', subscribeInBackground(bus, {
      topics: [TOPICS.callFailures], group: FAILED_CALLS_CONSUMER_GROUP, maxBatch: config.USAGE_BATCH_MAX, fetchWaitMs: config.USAGE_BATCH_WAIT_MS,
      handleBatch: createFailedCallsHandler({ store, stats, logger, now, finishedPostings }),
    }, logger));
    health.addCheck('call-failures-consumer', async () => failuresConsumer.joined(), 'degraded');
    const archiveSweeper = setInterval(() => {
      archive.sweep().catch((err: unknown) => logger.warn({ err }, 'archive sweep failed; retrying on the next tick'));
    }, config.ARCHIVE_SWEEP_MS);
    archiveSweeper.unref();
    background('archive-sweeper', { stop: async () => clearInterval(archiveSweeper) });
    const lagOf = bus.consumerLag?.bind(bus);
    if (lagOf) metrics.watchConsumerLag(USAGE_CONSUMER_GROUP, () => lagOf(USAGE_CONSUMER_GROUP, [TOPICS.usage]));
    const billing = new BillingService(store, now);
    const holds = new SpendHolds(store, priceBook, { allowanceMicros: config.SPEND_OVERDRAFT_ALLOWANCE_USD, holdTtlMs: config.SPEND_HOLD_TTL_MS }, logger, now);
    const sweeper = setInterval(() => {
      holds.sweepExpired().catch((err: unknown) => logger.warn({ err }, 'spend hold sweep failed; retrying on the next tick'));
    }, config.SPEND_HOLD_SWEEP_MS);
    sweeper.unref();
    background('spend-hold-sweeper', { stop: async () => clearInterval(sweeper) });

    // gRPC also takes API keys, checked by keys; service identities go through the chassis's one verifier.
    const apiKeys = client('keys', new KeysApiKeyAccounts(config.KEYS_GRPC_ADDR));
    const auth = grpcAuthenticator(apiKeys);
    return {
      routes: [billingRoutes({ billing, stats, archive, now })],
      grpc: [{ definition: billingProto.gateway.billing.v1.BillingService.service, handlers: billingGrpcHandlers(billing, holds, auth, logger) }],
    };
  });
}
