import { callFailedEvent } from '@gw/billed-call';
import { JobWorkerPool } from '@gw/jobs';
import { TOPICS } from '@gw/proto';
import type { Router } from 'express';
import type { MediaContext } from '../media-context';
import { guardedVideoUrls } from './guarded-video-urls';
import { VideoHolds } from './video-holds';
import { videoJobHandler, videoJobStore, type VideoJobPayload, type VideoJobResult } from './video-poller';
import { ensureVideoIndexes, videosCollection } from './video-records';
import { VideoModels } from './video-routes';
import { VideoSettlement } from './video-settlement';
import { videosRoutes } from './videos-routes';
import { VideosService, type AssetUrls } from './videos-service';

/** How often each instance settles what a crash left pending and re-queues open videos whose job was lost. */
const MAINTENANCE_MS = 10_000;

/** Videos: the API, this instance's pollers, and the maintenance sweep. */
export async function startVideos(ctx: MediaContext, env: NodeJS.ProcessEnv, assetUrl: AssetUrls): Promise<Router> {
  const { config, scope, store } = ctx;
  const videos = videosCollection(store);
  await ensureVideoIndexes(videos);
  const jobs = videoJobStore(store);
  await jobs.ensureIndexes();
  const models = scope.client('video-providers', new VideoModels(ctx.catalog, env, { foreignUrls: guardedVideoUrls(ctx.guardedClient, config.VIDEO_MAX_BYTES) }));
  const settlement = new VideoSettlement(videos, ctx.outbox, ctx.signedUrls, scope.logger);
  const holds = new VideoHolds(ctx.billing, scope.logger);

  const workers = scope.background('video-pollers', new JobWorkerPool<VideoJobPayload, VideoJobResult>({
    jobs,
    logger: scope.logger.child({ component: 'video-pollers' }),
    handler: videoJobHandler({
      videos, models, blobs: ctx.blobs, settlement, holds, assetUrl, logger: scope.logger, archive: ctx.archive,
      failed: (call) => ctx.publisher.enqueue(TOPICS.callFailures, { key: call.identity.accountId, value: callFailedEvent(call) }),
      options: { pollMinMs: config.VIDEO_POLL_MIN_MS, pollMaxMs: config.VIDEO_POLL_MAX_MS, taskTimeoutMs: config.VIDEO_TASK_TIMEOUT_MS, maxVideoBytes: config.VIDEO_MAX_BYTES },
    }),
    workers: config.VIDEO_WORKERS,
    leaseMs: config.VIDEO_LEASE_MS,
    pollMs: config.VIDEO_CLAIM_POLL_MS,
    cancelCheckMs: config.VIDEO_LEASE_MS,
    shutdownGraceMs: 0,
    // A video outlives many restarts of its pollers; each run resumes from the record.
    maxAttempts: 1_000,
  }));
  const service = new VideosService({
    videos, models, knownModel: (id) => ctx.catalog.models.some((m) => m.id === id), jobs, workers, holds, assetUrl,
    blobs: ctx.blobs, urls: ctx.signedUrls, outbound: ctx.outbound,
  });

  const maintain = async () => {
    await settlement.sweep();
    for (const open of await videos.find({ status: { $in: ['queued', 'in_progress'] } }, { limit: 100, sort: { created_at_ms: 1 } })) {
      await service.enqueue(open);
    }
  };
  let sweeping = Promise.resolve();
  const sweep = () => { sweeping = sweeping.then(maintain).catch((err: unknown) => scope.logger.warn({ err }, 'video maintenance failed; retrying on the next sweep')); };
  sweep();
  const timer = setInterval(sweep, MAINTENANCE_MS);
  timer.unref();
  scope.background('video-maintenance', { stop: async () => { clearInterval(timer); await sweeping; } });
  workers.start();
  return videosRoutes(service);
}
