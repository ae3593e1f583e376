import type { BlobStore } from '@gw/blobs';
import type { CatalogModel } from '@gw/catalog';
import { checkOutboundUrl, type OutboundPolicy } from '@gw/net-guard';
import { currentTraceparent, InputError, NotFoundError, newId, newRequestId, type Identity } from '@gw/platform';
import type { VideoGenerationRequest } from '@gw/provider-spec';
import type { Collection } from '@gw/store';
import { blobReader, type BlobReader } from '../blob-answer';
import { resolveAssets } from '../native/native-params';
import type { SignedUrls } from '../signed-urls';
import { toVideoObject, videoFilename, type VideoObject } from './video-object';
import { maxVideoSeconds, type VideoHolds } from './video-holds';
import type { VideoJobStore } from './video-poller';
import type { VideoDoc } from './video-records';
import { checkAgainstSchema, parseNativeVideoRequest, parseVideoRequest, type VideoGatewayFields } from './video-request';
import type { VideoModels } from './video-routes';

export interface VideosServiceDeps {
  videos: Collection<VideoDoc>;
  models: VideoModels;
  /** Whether the catalogue knows a model at all (a 400 for a model that is not a video model, else a 404). */
  knownModel: (id: string) => boolean;
  jobs: VideoJobStore;
  workers: { wake(): void };
  holds: Pick<VideoHolds, 'reserve' | 'release'>;
  /** A short-lived fetchable URL for an `asset://` reference of the account's own (a 400 naming `param` otherwise). */
  assetUrl: AssetUrls;
  blobs: BlobStore;
  urls: SignedUrls;
  outbound: OutboundPolicy;
  now?: () => number;
}

export type AssetUrls = (accountId: string, ref: string, param: string) => Promise<string>;

export const CONTENT_FORMATS = ['redirect', 'url', 'binary'] as const;
export type ContentFormat = (typeof CONTENT_FORMATS)[number];

export type VideoContentAnswer =
  | { format: 'redirect'; location: string }
  | { format: 'url'; body: { url: string; video_id: string; expires_in: number } }
  | { format: 'binary'; read: BlobReader; bytes: number; filename: string };

/** A queued job of a video is never expired: the poller's own task timeout ends a video that cannot finish. */
const JOB_NEVER_EXPIRES_MS = 3650 * 24 * 3600_000;

// Another account's video is indistinguishable from a missing one.
const notFound = (videoId: string) => new NotFoundError(`No such video: ${videoId}`, 'video_id', 'video_not_found');

/** Video tasks of an account: submit (checked in full before anything is stored), read, content. */
export class VideosService {
  private readonly now: () => number;

  constructor(private readonly deps: VideosServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  async create(identity: Identity, traceId: string, body: unknown, native: boolean): Promise<{ video: VideoObject; requestId: string }> {
    let fields: VideoGatewayFields;
    let request: VideoGenerationRequest | null = null;
    let nativeBody: Record<string, unknown> | null = null;
    let prompt: string;
    let model: CatalogModel;
    if (native) {
      const parsed = parseNativeVideoRequest(body);
      ({ body: nativeBody, prompt } = parsed);
      fields = parsed;
      model = this.deps.models.model(fields.model, this.deps.knownModel);
      // Checked now (the caller's own assets only); replaced by fresh links when the poller submits it.
      await resolveAssets(nativeBody, (ref, param) => this.deps.assetUrl(identity.accountId, ref, param));
    } else {
      const parsed = parseVideoRequest(body);
      fields = parsed;
      request = parsed.request;
      prompt = request.prompt;
      model = this.deps.models.model(fields.model, this.deps.knownModel);
      this.checkRequest(model, request);
    }
    if (fields.callbackUrl !== null) await checkOutboundUrl(fields.callbackUrl, { ...this.deps.outbound, param: 'callback_url' });

    // The billing id exists, and the spend is held, before anything is stored or sent upstream.
    const requestId = newRequestId();
    const deployments = this.deps.models.routesOf(model.id).map((r) => r.deployment.id);
    await this.deps.holds.reserve(identity, requestId, deployments, maxVideoSeconds(model, (request ?? nativeBody)?.duration), traceId);
    const now = this.now();
    const video: VideoDoc = {
      _id: newId('video_'),
      account_id: identity.accountId,
      key_hash: identity.keyHash,
      model: fields.model,
      prompt,
      status: 'queued',
      request_id: requestId,
      caller_request_id: fields.callerRequestId,
      callback_url: fields.callbackUrl,
      parameters: request ? echoParameters(request) : {},
      request,
      native_body_json: nativeBody ? JSON.stringify(nativeBody) : null,
      deployment_id: null, provider_name: null, provider_task_id: null, progress: 0, provider_response_json: null, provider_parameters: {},
      duration_s: null, last_frame_url: null, last_frame_blob_key: null, last_frame_type: null, blob_key: null, bytes: null, usage: null, error: null,
      usage_pending: false, callback_pending: false, trace_id: traceId, traceparent: currentTraceparent() ?? null,
      created_at_ms: now, updated_at_ms: now, completed_at_ms: null,
    };
    try {
      await this.deps.videos.insertOne(video);
    } catch (err) {
      this.deps.holds.release(identity.accountId, requestId, traceId);
      throw err;
    }
    await this.enqueue(video);
    return { video: toVideoObject(video, this.deps.urls), requestId: video.request_id };
  }

  /** Queues the poller's job of a video (idempotent: a video has one job, under its own id). */
  async enqueue(video: Pick<VideoDoc, '_id' | 'account_id'>): Promise<void> {
    await this.deps.jobs.enqueue({ id: video._id, payload: { video_id: video._id }, ownerId: video.account_id, expiresAtMs: this.now() + JOB_NEVER_EXPIRES_MS });
    this.deps.workers.wake();
  }

  async get(accountId: string, videoId: string): Promise<VideoObject> {
    return toVideoObject(await this.find(accountId, videoId), this.deps.urls);
  }

  async content(accountId: string, videoId: string, format: unknown): Promise<VideoContentAnswer> {
    const wanted = format === undefined ? 'redirect' : format;
    if (!CONTENT_FORMATS.includes(wanted as ContentFormat)) throw new InputError(`format must be one of ${CONTENT_FORMATS.join(', ')}`, 'format');
    const video = await this.find(accountId, videoId);
    if (video.status !== 'completed' || !video.blob_key) {
      throw new InputError(`Video ${videoId} is not completed yet; its status is ${video.status}`, null, 'video_not_ready');
    }
    const filename = videoFilename(video._id);
    if (wanted === 'binary') {
      const read = blobReader(this.deps.blobs, video.blob_key, () => notFound(videoId));
      return { format: 'binary', read, bytes: video.bytes ?? 0, filename };
    }
    const { url, expiresIn } = this.deps.urls.sign({ blobKey: video.blob_key, contentType: 'video/mp4', filename });
    return wanted === 'redirect' ? { format: 'redirect', location: url } : { format: 'url', body: { url, video_id: video._id, expires_in: expiresIn } };
  }

  private async find(accountId: string, videoId: string): Promise<VideoDoc> {
    const video = await this.deps.videos.findOne({ _id: videoId, account_id: accountId });
    if (!video) throw notFound(videoId);
    return video;
  }

  /** The model's schema first, then some deployment must honour the request (the first refusal is the answer). */
  private checkRequest(model: CatalogModel, request: VideoGenerationRequest): void {
    checkAgainstSchema(request, model);
    let refusal: unknown = null;
    for (const route of this.deps.models.routesOf(model.id)) {
      try {
        route.provider.checkRequest(request);
        return;
      } catch (err) {
        refusal ??= err;
      }
    }
    throw refusal;
  }
}

function echoParameters(request: VideoGenerationRequest): Record<string, unknown> {
  const { prompt: _prompt, ...parameters } = request;
  return parameters;
}
