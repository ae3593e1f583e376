import type { BlobStore } from '@gw/blobs';
import { createOutbox, type Bus, type Outbox } from '@gw/bus';
import { loadCatalog, type Catalog } from '@gw/catalog';
import { outboundPolicyFromConfig, type OutboundPolicy } from '@gw/net-guard';
import type { ServiceScope } from '@gw/platform';
import type { Store } from '@gw/store';
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
  signedUrls: SignedUrls;
  /** Where URLs callers chose may lead (file_url fetches, callbacks). */
  outbound: OutboundPolicy;
  scope: ServiceScope;
}

export async function openMediaContext(
  deps: { config: MediaConfig; store: Store; bus: Bus; blobs: BlobStore; env: NodeJS.ProcessEnv },
  scope: ServiceScope,
): Promise<MediaContext> {
  const { config, store, bus, blobs, env } = deps;
  const catalog = loadCatalog(config.CATALOG_FILE, env);
  const outbox = scope.publisher('outbox', createOutbox({ bus, store, logger: scope.logger }));
  return {
    config, store, blobs, catalog, outbox, scope,
    signedUrls: new SignedUrls(config.GATEWAY_IDENTITY_SECRET, config.MEDIA_PUBLIC_BASE_URL, config.MEDIA_SIGNED_URL_TTL_S),
    outbound: outboundPolicyFromConfig(config, scope.logger),
  };
}
