import { readFileSync } from 'node:fs';
import { JobExpirySweeper, JobStore, JobWorkerPool } from '@gw/jobs';
import { GuardedHttpClient, outboundPolicyFromConfig } from '@gw/net-guard';
import { startService, type Logger, type RunningService } from '@gw/platform';
import type { Bus } from '@gw/bus';
import type { Store } from '@gw/store';
import { TOPICS } from '@gw/proto';
import { CALLBACK_CONSUMER_GROUP, CallbackIntake, startCallbackConsumer } from './callback-intake';
import type { WebhooksConfig } from './config';
import { DELIVERY_JOB_KIND, deliveryHandler, type DeliveryPayload, type DeliveryResult } from './delivery';
import { DeliveryLog } from './delivery-log';
import { webhooksRouter } from './http-routes';
import { SettingsStore } from './settings-store';
import { SecretBox } from './signing-secret';
import { WebhooksService } from './webhooks-service';

export interface WebhooksServiceOptions {
  config: Pick<WebhooksConfig, 'WEBHOOKS_HTTP_PORT' | 'GATEWAY_IDENTITY_SECRET' | 'BIND_HOST' | 'GATEWAY_ALLOW_LOOPBACK_CALLBACKS'
    | 'WEBHOOKS_WORKERS' | 'WEBHOOKS_LEASE_MS' | 'WEBHOOKS_POLL_MS'>
    & Partial<Pick<WebhooksConfig, 'ACCESS_LOG' | 'WEBHOOK_SECRETS_KEY' | 'WEBHOOKS_EXTRA_CA_FILE'>>;
  store: Store;
  bus: Bus;
  logger: Logger;
  /** Clock, for tests. */
  now?: () => number;
}

const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * Starts the webhooks service on engines the caller owns (and closes): the callback consumer, the delivery
 * workers (leased jobs: any number of instances, a restart loses nothing) and the settings and delivery-log API.
 */
export async function startWebhooksService(opts: WebhooksServiceOptions): Promise<RunningService> {
  const { config, store, bus, logger } = opts;
  const now = opts.now ?? Date.now;
  return startService({
    name: 'webhooks', logger, host: config.BIND_HOST, httpPort: config.WEBHOOKS_HTTP_PORT,
    identitySecret: config.GATEWAY_IDENTITY_SECRET, bodyLimitBytes: BODY_LIMIT_BYTES, accessLog: config.ACCESS_LOG,
  }, async ({ health, metrics, background }) => {
    const settings = SettingsStore.over(store);
    const log = DeliveryLog.over(store);
    const jobs = new JobStore<DeliveryPayload, DeliveryResult>({ store, kind: DELIVERY_JOB_KIND, clock: now });
    await Promise.all([log.ensureIndexes(), jobs.ensureIndexes()]);

    const secrets = new SecretBox(config.WEBHOOK_SECRETS_KEY ?? config.GATEWAY_IDENTITY_SECRET);
    const policy = outboundPolicyFromConfig(config, logger);
    const extraCa = config.WEBHOOKS_EXTRA_CA_FILE ? [readFileSync(config.WEBHOOKS_EXTRA_CA_FILE, 'utf8')] : undefined;
    const client = new GuardedHttpClient({ ...policy, extraCa });

    const pool = background('delivery-workers', new JobWorkerPool<DeliveryPayload, DeliveryResult>({
      jobs, logger, workers: config.WEBHOOKS_WORKERS, leaseMs: config.WEBHOOKS_LEASE_MS, pollMs: config.WEBHOOKS_POLL_MS,
      cancelCheckMs: config.WEBHOOKS_LEASE_MS, shutdownGraceMs: 2_000,
      handler: deliveryHandler({ log, settings, secrets, client, logger, now, metrics }),
    }));
    pool.start();
    metrics.watchJobQueue(jobs.kind, () => jobs.queueStats());
    // A delivery no worker started within its window (the whole service was down a day) is marked expired.
    background('delivery-expiry', new JobExpirySweeper(jobs, 60_000, logger)).start();
    const intake = new CallbackIntake(jobs, settings, () => pool.wake(), logger, now);
    // Events wait durably in the bus while the consumer (re)joins; the API and the deliveries need only the store.
    const consumer = background('callback-consumer', startCallbackConsumer(bus, intake, logger));
    health
      .addCheck('store', () => store.ping())
      .addCheck('bus', () => bus.ping(), 'degraded')
      .addCheck('callback-consumer', async () => consumer.joined(), 'degraded');
    const lagOf = bus.consumerLag?.bind(bus);
    if (lagOf) metrics.watchConsumerLag(CALLBACK_CONSUMER_GROUP, () => lagOf(CALLBACK_CONSUMER_GROUP, [TOPICS.callbacks]));

    const service = new WebhooksService({ settings, log, secrets, intake, policy, now });
    return { routes: [webhooksRouter(service)] };
  });
}
