import type { BlobStore } from '@gw/blobs';
import type { Bus } from '@gw/bus';
import { startService, type Logger, type RunningService } from '@gw/platform';
import type { Store } from '@gw/store';
import type { MediaConfig } from './config';
import { openMediaContext } from './media-context';
import { signedRoutes } from './signed-routes';
import { startVideos } from './videos/videos-capability';

export interface MediaServiceDeps {
  config: MediaConfig;
  store: Store;
  bus: Bus;
  /** The blob engine for media bytes; the caller owns (and closes) it, like the store. */
  blobs: BlobStore;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}

/**
 * Images, videos, audio transcription and speech. The shared pieces (catalogue, blobs, signed links, billed
 * calls, the outbox) are opened once in the media context; each capability adds its routes and background
 * work below from that context.
 */
export async function startMediaService({ config, store, bus, blobs, logger, env = process.env }: MediaServiceDeps): Promise<RunningService> {
  return startService({
    name: 'media', logger, host: config.BIND_HOST, httpPort: config.MEDIA_HTTP_PORT,
    identitySecret: config.GATEWAY_IDENTITY_SECRET, bodyLimitBytes: config.MEDIA_BODY_LIMIT_BYTES, accessLog: config.ACCESS_LOG,
  }, async (scope) => {
    const ctx = await openMediaContext({ config, store, bus, blobs, env }, scope);
    const routes = [
      signedRoutes(ctx.signedUrls, blobs),
      // Capabilities mount here, each from the context: images, audio, and videos (routes and their poller).
      await startVideos(ctx, env),
    ];
    scope.health
      .addCheck('store', () => store.ping())
      .addCheck('bus', () => bus.ping(), 'degraded');
    return { routes };
  });
}
