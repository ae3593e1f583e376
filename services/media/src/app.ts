import type { BlobStore } from '@gw/blobs';
import type { Bus } from '@gw/bus';
import { startService, type Logger, type RunningService } from '@gw/platform';
import type { Store } from '@gw/store';
import { AudioSources } from './audio/audio-source';
import { audioRoutes } from './audio/audio-routes';
import { SpeechService } from './audio/speech-service';
import { TranscriptionService } from './audio/transcription-service';
import type { MediaConfig } from './config';
import { ImageInputs } from './images/image-inputs';
import { ensureImageIndexes, imagesCollection } from './images/image-records';
import { imagesRoutes } from './images/images-routes';
import { ImagesService } from './images/images-service';
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
    const records = imagesCollection(store);
    await ensureImageIndexes(records);
    const inputs = new ImageInputs(records, blobs, ctx.guardedClient, ctx.signedUrls, { maxBytes: config.MEDIA_IMAGE_MAX_BYTES, timeoutMs: config.MEDIA_PROVIDER_TIMEOUT_MS });
    const images = new ImagesService({ router: ctx.router, calls: ctx.calls, records, blobs, inputs, signedUrls: ctx.signedUrls, archive: ctx.archive });
    const routes = [
      signedRoutes(ctx.signedUrls, blobs),
      imagesRoutes({ images, inputs, router: ctx.router, calls: ctx.calls, archive: ctx.archive, maxImageBytes: config.MEDIA_IMAGE_MAX_BYTES, heartbeatMs: config.SSE_HEARTBEAT_MS }),
      audioRoutes({
        transcription: new TranscriptionService({ router: ctx.router, calls: ctx.calls, archive: ctx.archive }),
        speech: new SpeechService({ router: ctx.router, calls: ctx.calls, archive: ctx.archive }),
        sources: new AudioSources(ctx.guardedClient, { maxBytes: config.MEDIA_AUDIO_MAX_BYTES, timeoutMs: config.MEDIA_PROVIDER_TIMEOUT_MS }),
        inputs, maxAudioBytes: config.MEDIA_AUDIO_MAX_BYTES, heartbeatMs: config.SSE_HEARTBEAT_MS,
      }),
      await startVideos(ctx, env, (accountId, ref, param) => inputs.assetUrl(accountId, ref, param)),
    ];
    scope.health
      .addCheck('store', () => store.ping())
      .addCheck('bus', () => bus.ping(), 'degraded');
    return { routes };
  });
}
