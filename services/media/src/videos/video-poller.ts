import { Readable } from 'node:stream';
import type { BlobStore } from '@gw/blobs';
import type { FailedCallRecord, RouteRef } from '@gw/billed-call';
import type { ArchivedCall, CallArchiver } from '@gw/call-archive';
import { JobStore, type JobHandler } from '@gw/jobs';
import { GatewayError, toGatewayError, type Logger } from '@gw/platform';
import { isRetryableUpstreamError, VIDEO_DOWNLOAD_REFUSED, type VideoTaskError, type VideoTaskState } from '@gw/provider-spec';
import type { Collection, Store } from '@gw/store';
import type { VideoHolds } from './video-holds';
import type { VideoModels, VideoRoute } from './video-routes';
import { isTerminalVideo, lastFrameBlobKey, parseStoredJson, videoBlobKey, type VideoDoc, type VideoStatus } from './video-records';
import type { VideoSettlement } from './video-settlement';
import type { AssetUrls } from './videos-service';
import { resolveAssets } from '../native/native-params';

export interface VideoJobPayload {
  video_id: string;
}
export interface VideoJobResult {
  status: VideoStatus;
}

export const VIDEO_JOB_KIND = 'video.task';
export const videoJobStore = (store: Store) => new JobStore<VideoJobPayload, VideoJobResult>({ store, kind: VIDEO_JOB_KIND });
export type VideoJobStore = ReturnType<typeof videoJobStore>;

export interface VideoPollerOptions {
  /** First wait between polls of a task; it grows 1.5x per poll up to `pollMaxMs`. */
  pollMinMs: number;
  pollMaxMs: number;
  /** A task not finished this long after it was created is failed (`video_task_timeout`): a stuck upstream task ends. */
  taskTimeoutMs: number;
  /** The largest video copied into the blob store. */
  maxVideoBytes: number;
}

export interface VideoPollerDeps {
  videos: Collection<VideoDoc>;
  models: VideoModels;
  blobs: BlobStore;
  settlement: VideoSettlement;
  holds: Pick<VideoHolds, 'release'>;
  assetUrl: AssetUrls;
  options: VideoPollerOptions;
  logger: Logger;
  /** Each video's request and outcome once it is terminal (its bytes described, never inlined). */
  archive?: CallArchiver;
  /** A video that failed after it was accepted, for the statistics (billing counts a request id once). */
  failed?: (call: FailedCallRecord<RouteRef, 'video'>) => void;
  now?: () => number;
}

const OPEN: VideoStatus[] = ['queued', 'in_progress'];

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((resolve, reject) => {
  if (signal.aborted) return reject(signal.reason);
  const timer = setTimeout(() => { signal.removeEventListener('abort', stop); resolve(); }, ms);
  const stop = () => { clearTimeout(timer); reject(signal.reason); };
  signal.addEventListener('abort', stop, { once: true });
});

const describe = (err: unknown): VideoTaskError => {
  const e = toGatewayError(err);
  return { code: e.code, message: e.message };
};

/**
 * Follows one video task to its end under the job's lease: submits it (the billing id and the deployment are
 * on the record before anything goes upstream), polls with backoff, copies the finished video into the blob
 * store, then settles (usage, callback). Every step starts from the record, so a run that died anywhere is
 * taken over by any instance once its lease lapses: a task already submitted is polled, never submitted again.
 */
export function videoJobHandler(deps: VideoPollerDeps): JobHandler<VideoJobPayload, VideoJobResult> {
  const now = deps.now ?? Date.now;
  const { videos, options } = deps;

  async function write(video: VideoDoc, set: Partial<VideoDoc>): Promise<VideoDoc> {
    const updated = await videos.findOneAndUpdate({ _id: video._id, status: { $in: OPEN } }, { $set: { ...set, updated_at_ms: now() } });
    // Null: the video is already terminal (another run finished it); carry on from what is stored.
    return updated ?? (await videos.findOne({ _id: video._id })) ?? video;
  }

  function fail(video: VideoDoc, error: VideoTaskError): Promise<VideoDoc> {
    return write(video, { status: 'failed', error, usage_pending: false, callback_pending: video.callback_url !== null, completed_at_ms: now() });
  }

  async function submit(video: VideoDoc, signal: AbortSignal, log: Logger): Promise<VideoDoc> {
    const routes = deps.models.routesOf(video.model);
    const nativeBody = parseStoredJson(video.native_body_json);
    // A native body is written for one wire format: only deployments of the first one's format may take it.
    const usable = nativeBody ? routes.filter((r) => r.kind === routes[0]?.kind) : routes;
    // A run that died mid-submit asks the same deployment again first (same idempotency key where the format has one).
    const ordered = video.deployment_id ? [...usable.filter((r) => r.deployment.id === video.deployment_id), ...usable.filter((r) => r.deployment.id !== video.deployment_id)] : usable;
    if (ordered.length === 0) return fail(video, { code: 'model_unavailable', message: `No deployment of ${video.model} can take this request` });
    for (const route of ordered) {
      video = await write(video, { deployment_id: route.deployment.id, provider_name: route.providerName });
      if (isTerminalVideo(video.status)) return video;
      try {
        const options = { idempotencyKey: video.request_id };
        // Asset references become links valid from now (an asset deleted since the submit fails the video).
        const handle = nativeBody
          ? await route.provider.submitNative(await resolveAssets(nativeBody, (ref, param) => deps.assetUrl(video.account_id, ref, param)), route.target, options, signal)
          : await route.provider.submit(video.request!, route.target, options, signal);
        log.info({ videoId: video._id, deployment: route.deployment.id, providerTaskId: handle.id }, 'video task submitted');
        return write(video, { provider_task_id: handle.id });
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        if (!isRetryableUpstreamError(err)) return fail(video, describe(err));
        log.warn({ videoId: video._id, deployment: route.deployment.id, err: (err as Error).message }, 'video submit failed; trying the next deployment');
      }
    }
    return video;
  }

  async function poll(video: VideoDoc, route: VideoRoute, signal: AbortSignal): Promise<VideoDoc> {
    let state: VideoTaskState;
    try {
      state = await route.provider.poll({ id: video.provider_task_id! }, route.target, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (isRetryableUpstreamError(err)) return video;
      return fail(video, describe(err));
    }
    const seen: Partial<VideoDoc> = {
      progress: state.progress, provider_response_json: JSON.stringify(state.raw), provider_parameters: state.parameters,
    };
    if (state.status === 'failed') return fail(await write(video, seen), state.error ?? { code: 'video_generation_failed', message: 'The provider failed the task' });
    if (state.status !== 'completed') return write(video, { ...seen, status: state.status });
    const key = videoBlobKey(video.account_id, video._id);
    let bytes: number;
    let lastFrame: Partial<VideoDoc> = {};
    try {
      const content = await route.provider.download({ id: video.provider_task_id! }, state, route.target, signal);
      bytes = (await deps.blobs.put(key, Readable.from(content.body), { maxBytes: options.maxVideoBytes })).bytes;
      if (state.lastFrameUrl && route.provider.downloadLastFrame) {
        const frame = await route.provider.downloadLastFrame(state, route.target, signal);
        const frameKey = lastFrameBlobKey(video.account_id, video._id);
        await deps.blobs.put(frameKey, Readable.from(frame.body), { maxBytes: options.maxVideoBytes });
        lastFrame = { last_frame_blob_key: frameKey, last_frame_type: frame.contentType };
      }
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      // A provider failure that will not pass, a URL the gateway refuses, or a video too large to keep, fails it
      // (with no copy kept: a refused last frame drops the video already stored); anything else is retried.
      if (!(err instanceof GatewayError) || isRetryableUpstreamError(err)) throw err;
      await deps.blobs.delete(key);
      const code = err.code === VIDEO_DOWNLOAD_REFUSED ? VIDEO_DOWNLOAD_REFUSED : 'video_download_failed';
      return fail(video, { code, message: `The finished video could not be copied: ${err.message}` });
    }
    return write(video, {
      ...seen, ...lastFrame, status: 'completed', blob_key: key, bytes, duration_s: state.durationSeconds, last_frame_url: state.lastFrameUrl,
      usage: state.usage ?? (state.durationSeconds !== null ? { video_duration_seconds: state.durationSeconds } : null),
      usage_pending: true, callback_pending: video.callback_url !== null, completed_at_ms: now(),
    });
  }

  return async ({ job, signal, checkpoint }) => {
    const log = deps.logger.child({ videoId: job.payload.video_id });
    let video = await videos.findOne({ _id: job.payload.video_id });
    if (!video) return { status: 'failed' };
    let delay = options.pollMinMs;
    while (!isTerminalVideo(video.status)) {
      await checkpoint();
      if (now() - video.created_at_ms > options.taskTimeoutMs) {
        video = await fail(video, {
          code: 'video_task_timeout',
          message: `The provider did not finish the video within ${Math.round(options.taskTimeoutMs / 1000)} s (last status: ${video.status})`,
        });
        break;
      }
      try {
        if (!video.provider_task_id) {
          video = await submit(video, signal, log);
        } else {
          const route = deps.models.route(video.model, video.deployment_id ?? '');
          video = route ? await poll(video, route, signal) : await fail(video, { code: 'deployment_unavailable', message: `Deployment ${video.deployment_id} is no longer configured` });
        }
      } catch (err) {
        // The store or blob store failed under us: nothing was decided, so the step is tried again (the task
        // timeout still ends a video that can never finish). Throwing would fail the job and orphan the video.
        if (signal.aborted) throw signal.reason;
        log.warn({ err }, 'a video step failed; retrying');
      }
      if (isTerminalVideo(video.status)) break;
      await sleep(delay, signal);
      delay = Math.min(Math.round(delay * 1.5), options.pollMaxMs);
    }
    // A failed video is not billed: its hold goes back (a completed one is settled by its usage event).
    if (video.status === 'failed') {
      deps.holds.release(video.account_id, video.request_id, video.trace_id);
      deps.failed?.(failedVideo(video));
    }
    await deps.settlement.settle(video);
    deps.archive?.record(archivedVideo(video));
    return { status: video.status };
  };
}

/**
 * A failed video as the statistics count it. It was accepted, so the failure is never the caller's: the
 * provider's or the gateway's (a stuck task, a refused download), as a 502 would be on a synchronous call.
 */
function failedVideo(video: VideoDoc): FailedCallRecord<RouteRef, 'video'> {
  return {
    requestId: video.request_id, identity: { accountId: video.account_id, keyHash: video.key_hash }, model: video.model, apiType: 'video',
    route: video.provider_name && video.deployment_id ? { providerName: video.provider_name, deployment: { id: video.deployment_id } } : null,
    errorKind: video.error?.code ?? 'video_generation_failed', status: 502, clientError: false, streamed: false,
    startedAt: video.created_at_ms, traceId: video.trace_id,
  };
}

/** A terminal video as the archive keeps it: the request, and the outcome with the stored copy named (no signed links). */
function archivedVideo(video: VideoDoc): ArchivedCall {
  return {
    requestId: video.request_id, identity: { accountId: video.account_id, keyHash: video.key_hash }, apiType: 'video', model: video.model,
    providerResponseId: video.provider_task_id ?? '', streamed: false, startedAtMs: video.created_at_ms, traceId: video.trace_id,
    // Only a completed video is billed (its usage event is published on settling).
    unbilled: video.status !== 'completed',
    request: video.request ?? parseStoredJson(video.native_body_json),
    response: {
      id: video._id, object: 'video', status: video.status, model: video.model, provider_task_id: video.provider_task_id, duration_s: video.duration_s,
      usage: video.usage, error: video.error, response: parseStoredJson(video.provider_response_json),
      stored: video.blob_key ? { video_id: video._id, content_type: 'video/mp4', bytes: video.bytes } : null,
      completed_at: video.completed_at_ms === null ? null : new Date(video.completed_at_ms).toISOString(),
    },
  };
}
