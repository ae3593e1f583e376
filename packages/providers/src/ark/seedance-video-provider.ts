import type {
  ChatTarget, ForeignUrlOpener, VideoContent, VideoGenerationRequest, VideoProvider, VideoSubmitOptions, VideoTaskHandle, VideoTaskState,
} from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { jsonRequestHeaders, requestUpstream } from '../http/post-upstream';
import { callUpstream } from '../http/upstream-call';
import { malformedUpstreamError } from '../http/upstream-errors';
import { readJsonAnswer } from '../http/upstream-json';
import { downloadVideoFrom, videoTaskCallErrors } from '../http/video-task-call';
import { convertSeedanceTaskState } from './convert-from-seedance-task';
import { convertToSeedanceTask, SEEDANCE_CAPABILITIES } from './convert-to-seedance-task';
import { mapArkHttpError } from './ark-error';
import { seedanceCreatedSchema, seedanceTaskSchema } from './seedance-api';

const TASKS = '/contents/generations/tasks';
const TASK_ERRORS = videoTaskCallErrors(mapArkHttpError);

/**
 * Seedance video tasks: `POST {base}/contents/generations/tasks` submits, `GET .../tasks/{id}` polls, and the
 * finished video is read from the task's `content.video_url` (a short-lived URL the provider signs). The API
 * documents no idempotency key or client request id, and its task list filters only by status, task ids and
 * model, so a submit retried after a crash may start a second upstream task (docs/videos.md, Limitation).
 */
export class SeedanceVideoProvider implements VideoProvider {
  readonly kind = 'ark';
  readonly capabilities = SEEDANCE_CAPABILITIES;

  /** `foreignUrls` opens the video and frame URLs off the provider's origin (storage links): the gateway's address guard. */
  constructor(private readonly foreignUrls: ForeignUrlOpener, private readonly pools: OriginPools = new OriginPools()) {}

  checkRequest(req: VideoGenerationRequest): void {
    convertToSeedanceTask(req, 'check');
  }

  submit(req: VideoGenerationRequest, target: ChatTarget, _options?: VideoSubmitOptions, signal?: AbortSignal): Promise<VideoTaskHandle> {
    return this.create({ ...convertToSeedanceTask(req, target.providerModel) }, target, signal);
  }

  submitNative(body: Record<string, unknown>, target: ChatTarget, _options?: VideoSubmitOptions, signal?: AbortSignal): Promise<VideoTaskHandle> {
    return this.create({ ...body, model: target.providerModel }, target, signal);
  }

  poll(handle: VideoTaskHandle, target: ChatTarget, signal?: AbortSignal): Promise<VideoTaskState> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.call(target, deadline, 'GET', `${TASKS}/${encodeURIComponent(handle.id)}`, undefined, TASK_ERRORS);
      const { json, data } = await readJsonAnswer(res, seedanceTaskSchema);
      return convertSeedanceTaskState(data, json);
    });
  }

  download(_handle: VideoTaskHandle, state: VideoTaskState, target: ChatTarget, signal?: AbortSignal): Promise<VideoContent> {
    const url = (state.raw.content as { video_url?: unknown } | undefined)?.video_url;
    if (typeof url !== 'string') throw malformedUpstreamError('task without a video URL');
    return downloadVideoFrom(this.pools, this.foreignUrls, target, url, TASK_ERRORS, signal);
  }

  downloadLastFrame(state: VideoTaskState, target: ChatTarget, signal?: AbortSignal): Promise<VideoContent> {
    if (!state.lastFrameUrl) throw malformedUpstreamError('task without a last frame URL');
    return downloadVideoFrom(this.pools, this.foreignUrls, target, state.lastFrameUrl, TASK_ERRORS, signal);
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private create(body: Record<string, unknown>, target: ChatTarget, signal?: AbortSignal): Promise<VideoTaskHandle> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.call(target, deadline, 'POST', TASKS, JSON.stringify(body), mapArkHttpError);
      return { id: (await readJsonAnswer(res, seedanceCreatedSchema)).data.id };
    });
  }

  private call(target: ChatTarget, deadline: Deadline, method: 'GET' | 'POST', endpoint: string, body: string | undefined,
    mapError: typeof TASK_ERRORS): Promise<UpstreamAnswer> {
    const headers = jsonRequestHeaders(target, false);
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    return requestUpstream(this.pools, target, { method, endpoint, headers, body, deadline, mapError });
  }
}
