import type {
  ChatTarget, VideoContent, VideoGenerationRequest, VideoProvider, VideoSubmitOptions, VideoTaskHandle, VideoTaskState,
} from '@gw/provider-spec';
import type { UpstreamAnswer } from '../http/arrived-bytes-request';
import type { Deadline } from '../http/deadline';
import { OriginPools } from '../http/origin-pools';
import { jsonRequestHeaders, requestUpstream } from '../http/post-upstream';
import { callUpstream, openUpstreamStream } from '../http/upstream-call';
import { readJsonAnswer } from '../http/upstream-json';
import { videoTaskCallErrors } from '../http/video-task-call';
import { convertOpenAIVideoState } from './convert-from-openai-video';
import { convertToOpenAIVideo, OPENAI_VIDEO_CAPABILITIES } from './convert-to-openai-video';
import { OPENAI_DIALECT } from './openai-chat-provider';
import { mapOpenAIHttpError } from './openai-error';
import { openAIVideoSchema } from './openai-video-api';

const SUBMIT_ERRORS = mapOpenAIHttpError;
const TASK_ERRORS = videoTaskCallErrors(mapOpenAIHttpError);

/**
 * OpenAI's videos API: `POST /videos` creates the video job, `GET /videos/{id}` polls it, and
 * `GET /videos/{id}/content` streams the finished mp4.
 */
export class OpenAIVideoProvider implements VideoProvider {
  readonly kind = OPENAI_DIALECT.kind;
  readonly capabilities = OPENAI_VIDEO_CAPABILITIES;

  constructor(private readonly pools: OriginPools = new OriginPools()) {}

  checkRequest(req: VideoGenerationRequest): void {
    convertToOpenAIVideo(req, 'check');
  }

  submit(req: VideoGenerationRequest, target: ChatTarget, options: VideoSubmitOptions = {}, signal?: AbortSignal): Promise<VideoTaskHandle> {
    return this.create({ ...convertToOpenAIVideo(req, target.providerModel) }, target, options, signal);
  }

  submitNative(body: Record<string, unknown>, target: ChatTarget, options: VideoSubmitOptions = {}, signal?: AbortSignal): Promise<VideoTaskHandle> {
    return this.create({ ...body, model: target.providerModel }, target, options, signal);
  }

  poll(handle: VideoTaskHandle, target: ChatTarget, signal?: AbortSignal): Promise<VideoTaskState> {
    return callUpstream(target, signal, async (deadline) => {
      const res = await this.call(target, deadline, 'GET', `/videos/${encodeURIComponent(handle.id)}`, undefined, TASK_ERRORS);
      const { json, data } = await readJsonAnswer(res, openAIVideoSchema);
      return convertOpenAIVideoState(data, json);
    });
  }

  async download(handle: VideoTaskHandle, _state: VideoTaskState, target: ChatTarget, signal?: AbortSignal): Promise<VideoContent> {
    const { res, deadline } = await openUpstreamStream(target, signal, (d) =>
      this.call(target, d, 'GET', `/videos/${encodeURIComponent(handle.id)}/content`, undefined, TASK_ERRORS, 'video/mp4'));
    deadline.dispose();
    const type = res.headers['content-type'];
    return { body: res.body, contentType: typeof type === 'string' ? type : 'video/mp4' };
  }

  async close(): Promise<void> {
    await this.pools.close();
  }

  private create(body: Record<string, unknown>, target: ChatTarget, options: VideoSubmitOptions, signal?: AbortSignal): Promise<VideoTaskHandle> {
    return callUpstream(target, signal, async (deadline) => {
      const idempotency: Record<string, string> = options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {};
      const res = await this.call(target, deadline, 'POST', '/videos', JSON.stringify(body), SUBMIT_ERRORS, undefined, idempotency);
      return { id: (await readJsonAnswer(res, openAIVideoSchema)).data.id };
    });
  }

  private call(
    target: ChatTarget, deadline: Deadline, method: 'GET' | 'POST', endpoint: string, body: string | undefined,
    mapError: typeof TASK_ERRORS, accept?: string, extra: Record<string, string> = {},
  ): Promise<UpstreamAnswer> {
    const headers = { ...jsonRequestHeaders(target, false), ...extra, ...OPENAI_DIALECT.authHeaders(target) };
    if (accept) headers.accept = accept;
    return requestUpstream(this.pools, target, { method, endpoint, headers, body, deadline, mapError });
  }
}
