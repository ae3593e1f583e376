import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { OpenCallJournal } from '@gw/billed-call';
import type { BlobStore } from '@gw/blobs';
import { createBatchingPublisher, createOutbox, type BatchingPublisher, type Bus, type Outbox } from '@gw/bus';
import { openCallArchiver, type CallArchiver } from '@gw/call-archive';
import { loadCatalog, type Catalog } from '@gw/catalog';
import { GuardedHttpClient, outboundPolicyFromConfig, type OutboundPolicy } from '@gw/net-guard';
import { grpcClientOptions, IdentitySigner, serviceIdentityInterceptor, type ServiceScope } from '@gw/platform';
import { billingProto, type BillingServiceClient } from '@gw/proto';
import type { Store } from '@gw/store';
import { mediaBilledCalls, type MediaBilledCalls } from './calls/media-billed-calls';
import { MediaRouter } from './calls/media-routes';
import type { MediaConfig } from './config';
import { SignedUrls } from './signed-urls';

/** What every media capability is built from; opened once per instance. */
export interface MediaContext {
  config: MediaConfig;
  store: Store;
  blobs: BlobStore;
  catalog: Catalog;
  /** Durable publishing (usage events, callbacks): an unavailable bus delays an event, never loses it. */
  outbox: Outbox;
  /** Batches events (usage) onto the outbox off the caller's path. */
  publisher: BatchingPublisher;
  signedUrls: SignedUrls;
  /** Where URLs callers chose may lead (file_url fetches, callbacks), and the client that enforces it. */
  outbound: OutboundPolicy;
  guardedClient: GuardedHttpClient;
  /** The catalogue's media models and their routes (one provider per wire format). */
  router: MediaRouter;
  /** The billed-call lifecycle: spend hold in billing, routes with fallback, streams journaled, the usage event. */
  calls: MediaBilledCalls;
  /** Every media call's request and answer (media bytes described, never inlined), for billing's archive. */
  archive: CallArchiver;
  /** Billing's gRPC API, for holds that outlive one request (video tasks). */
  billing: BillingServiceClient;
  scope: ServiceScope;
}

export async function openMediaContext(
  deps: { config: MediaConfig; store: Store; bus: Bus; blobs: BlobStore; env: NodeJS.ProcessEnv },
  scope: ServiceScope,
): Promise<MediaContext> {
  const { config, store, bus, blobs, env } = deps;
  const { logger } = scope;
  const catalog = loadCatalog(config.CATALOG_FILE, env);
  // Closed after the background work: the batching publisher first, then its outbox.
  const outbox = scope.publisher('outbox', createOutbox({ bus, store, logger }));
  const publisher = scope.publisher('usage-publisher', createBatchingPublisher({ outbox, logger }));
  const archive = openCallArchiver(config, outbox, logger, (name, p) => scope.publisher(name, p));
  const outbound = outboundPolicyFromConfig(config, logger);
  const extraCa = config.MEDIA_EXTRA_CA_FILE ? [readFileSync(config.MEDIA_EXTRA_CA_FILE, 'utf8')] : undefined;
  const router = scope.client('media-providers', new MediaRouter(catalog, env, logger, config.MEDIA_PROVIDER_TIMEOUT_MS));
  // Billing's RPCs spend account money: every call carries media's signed service identity.
  // Every stream is journaled before its provider is called; any instance bills what a dead one left open.
  const journal = new OpenCallJournal({
    store, publisher, logger, serviceName: 'media', leaseMs: config.OPEN_CALL_LEASE_MS, checkpointMs: config.OPEN_CALL_CHECKPOINT_MS, sweepMs: config.OPEN_CALL_SWEEP_MS,
  });
  await journal.ensureIndexes();
  journal.start();
  scope.background('open-call-journal', journal);
  const billing = scope.client('billing', new billingProto.gateway.billing.v1.BillingService(config.BILLING_GRPC_ADDR, grpc.credentials.createInsecure(),
    { ...grpcClientOptions, interceptors: [serviceIdentityInterceptor(new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'media'))] }));
  return {
    config, store, blobs, catalog, outbox, publisher, scope, outbound, router, billing, archive,
    guardedClient: new GuardedHttpClient({ ...outbound, extraCa }),
    calls: mediaBilledCalls({ billing, router, publisher, journal, logger }),
    signedUrls: new SignedUrls(config.GATEWAY_IDENTITY_SECRET, config.MEDIA_PUBLIC_BASE_URL, config.MEDIA_SIGNED_URL_TTL_S),
  };
}
