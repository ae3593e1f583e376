import type * as http from 'node:http';
import {
  answerModelKnob, latencyOf, readBody, sendJson, serve, simulatorHandler, type ListenOptions, type RunningSimulator, type SimulatorHandler, type SimulatorHandlerOptions,
} from '../http-kit';
import { createSeedreamRoutes, isSeedreamPath } from './seedream-route';
import { decodeTaskId, knobOf, SIMULATED_FRAME_PNG, simulatedMp4, SimVideoTasks, type SimVideoTask } from '../video/video-tasks';

/**
 * The Ark API (BytePlus ModelArk / Volcengine Ark, base URL `url/api/v3`): Seedream image generation (see
 * seedream-route.ts) and Seedance's content generation tasks: `POST /api/v3/contents/generations/tasks`
 * (`model`, `content` with one text item, `resolution`, `ratio`, `duration`, `seed`, `watermark`, `return_last_frame`,
 * `generate_audio`) answers `{id}`; `GET .../tasks/{id}` the task; `GET .../tasks` the list. A succeeded task's
 * `content.video_url` (and `last_frame_url` when asked) are served, without a key, under `/sim-assets/`, as the
 * provider's presigned URLs are. Task behaviour and knobs: video-tasks.ts; model `sim-error-<status>` answers
 * the submit with that status; the prompt knob `sim-internal-video-url` names a video URL on another origin at an
 * internal address (`https://10.0.0.1/...`), as a hostile or misconfigured provider might.
 */
const TASKS_PATH = /^\/api\/v3\/contents\/generations\/tasks(?:\/([^/]+))?$/;
const ASSET_PATH = /^\/sim-assets\/(videos|frames)\/([^/]+)\.(mp4|png)$/;
const RESOLUTIONS = ['480p', '720p', '1080p'];
const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'];
const FIELDS = ['model', 'content', 'resolution', 'ratio', 'duration', 'seed', 'watermark', 'return_last_frame', 'generate_audio', 'camera_fixed', 'callback_url'];
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface ArkSimulator extends RunningSimulator {
  /** `url` + `/api/v3`: the provider base URL. */
  readonly baseUrl: string;
}

const errorBody = (code: string, message: string, param?: string) => ({ error: { code, message, type: 'BadRequest', ...(param ? { param } : {}) } });

function simulatedError(status: number) {
  if (status === 429) return errorBody('RateLimitExceeded.EndpointRPMExceeded', 'The request has exceeded the rate limit (simulated).');
  if (status === 401) return errorBody('AuthenticationError', 'The API key in the request is missing or invalid (simulated).');
  if (status === 404) return errorBody('ModelNotOpen', 'The model is not activated for this account (simulated).');
  if (status >= 500) return errorBody('InternalServiceError', 'The service encountered an unexpected internal error (simulated).');
  return errorBody('InvalidParameter', `Simulated error ${status}.`);
}

/** Where a succeeded task's video is said to be: this simulator, or an internal address elsewhere (the knob). */
const INTERNAL_ORIGIN = 'https://10.0.0.1';

function taskObject(task: SimVideoTask, origin: string) {
  const succeeded = task.status === 'succeeded';
  const videoOrigin = knobOf(task.prompt) === 'sim-internal-video-url' ? INTERNAL_ORIGIN : origin;
  return {
    id: task.id, model: task.model, status: task.status, error: task.error,
    content: succeeded
      ? {
        video_url: `${videoOrigin}/sim-assets/videos/${encodeURIComponent(task.id)}.mp4`,
        ...(task.params.return_last_frame === true ? { last_frame_url: `${origin}/sim-assets/frames/${encodeURIComponent(task.id)}.png` } : {}),
      }
      : undefined,
    usage: succeeded ? { completion_tokens: task.duration * 20_000, total_tokens: task.duration * 20_000 } : undefined,
    created_at: task.createdAt, updated_at: task.updatedAt,
    seed: task.params.seed ?? 42, resolution: task.params.resolution ?? '720p', ratio: task.params.ratio ?? '16:9',
    duration: task.duration, framespersecond: 24, ...(task.params.generate_audio !== undefined ? { generate_audio: task.params.generate_audio } : {}),
  };
}

/** The check a real Ark endpoint makes of a task body: the first problem as `[param, message]`, or null. */
function problemOf(body: Record<string, unknown>): [string, string] | null {
  const unknown = Object.keys(body).find((k) => !FIELDS.includes(k));
  if (unknown) return [unknown, `The parameter \`${unknown}\` specified in the request is not valid.`];
  const content = body.content;
  const text = Array.isArray(content) ? content.find((c) => (c as { type?: unknown })?.type === 'text') as { text?: unknown } | undefined : undefined;
  if (typeof text?.text !== 'string' || text.text === '') return ['content', 'The parameter `content` must include a text item.'];
  // Images are fetched by the provider: only http(s) URLs and base64 data URIs can be.
  const images = (content as Array<{ type?: unknown; image_url?: { url?: unknown } }>).filter((c) => c?.type === 'image_url');
  if (images.some((c) => typeof c.image_url?.url !== 'string' || !/^(https?:\/\/|data:image\/)/.test(c.image_url.url))) return ['content', 'The parameter `content.image_url.url` specified in the request is not valid.'];
  if (body.resolution !== undefined && !RESOLUTIONS.includes(body.resolution as string)) return ['resolution', 'The parameter `resolution` specified in the request is not valid.'];
  if (body.ratio !== undefined && !RATIOS.includes(body.ratio as string)) return ['ratio', 'The parameter `ratio` specified in the request is not valid.'];
  if (body.duration !== undefined && !(Number.isInteger(body.duration) && (body.duration as number) >= 2 && (body.duration as number) <= 12)) return ['duration', 'The parameter `duration` specified in the request is not valid.'];
  for (const flag of ['watermark', 'return_last_frame', 'generate_audio', 'camera_fixed']) {
    if (body[flag] !== undefined && typeof body[flag] !== 'boolean') return [flag, `The parameter \`${flag}\` specified in the request is not valid.`];
  }
  return null;
}

export async function startArkSimulator(options: SimulatorHandlerOptions & ListenOptions = {}): Promise<ArkSimulator> {
  const handle = createArkHandler(options);
  return serve(handle, handle.notFound, options, (url) => ({ baseUrl: `${url}/api/v3` }));
}

export function createArkHandler(options: SimulatorHandlerOptions = {}): SimulatorHandler {
  const tasks = new SimVideoTasks('cgt-sim');
  const images = createSeedreamRoutes((req) => latencyOf(req, options.latencyMs ?? 0), errorBody, simulatedError);

  function create(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, errorBody('InvalidParameter', 'The request body is not valid JSON.'));
    }
    if (typeof body?.model !== 'string' || body.model === '') return sendJson(res, 400, errorBody('MissingParameter', 'The request is missing the parameter `model`.', 'model'));
    if (answerModelKnob(res, body.model, latencyOf(req, options.latencyMs ?? 0), {}, { errorBody: simulatedError })) return;
    const problem = problemOf(body);
    if (problem) return sendJson(res, 400, errorBody('InvalidParameter', problem[1], problem[0]));
    const prompt = ((body.content as Array<{ type?: unknown; text?: string }>).find((c) => c.type === 'text')?.text) ?? '';
    const { model: _model, content: _content, duration, ...params } = body;
    sendJson(res, 200, { id: tasks.create(body.model, prompt, typeof duration === 'number' ? duration : 5, params).id });
  }

  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
    if (req.method === 'GET' && images.isAsset(path)) {
      req.resume();
      return images.serveImage(res);
    }
    const asset = ASSET_PATH.exec(path);
    if (asset) {
      req.resume();
      const task = tasks.get(decodeTaskId(asset[2]));
      if (!task || task.status !== 'succeeded') return sendJson(res, 404, errorBody('NotFound', 'The object does not exist.'));
      const bytes = asset[1] === 'videos' ? simulatedMp4(task.id, task.duration) : SIMULATED_FRAME_PNG;
      res.writeHead(200, { 'content-type': asset[1] === 'videos' ? 'video/mp4' : 'image/png', 'content-length': bytes.length });
      return void res.end(bytes);
    }
    const auth = req.headers.authorization;
    if (typeof auth !== 'string' || !auth.startsWith('Bearer ') || auth.slice(7).trim() === '') {
      req.resume();
      return sendJson(res, 401, simulatedError(401));
    }
    const [, id] = TASKS_PATH.exec(path) ?? [];
    if (req.method === 'POST' && isSeedreamPath(path)) {
      return readBody(req, MAX_BODY_BYTES, () => sendJson(res, 413, errorBody('RequestTooLarge', 'The request body is too large.')), (raw) => images.generate(req, res, raw, origin));
    }
    if (req.method === 'POST' && path === '/api/v3/contents/generations/tasks') {
      return readBody(req, MAX_BODY_BYTES, () => sendJson(res, 413, errorBody('RequestTooLarge', 'The request body is too large.')), (raw) => create(req, res, raw));
    }
    req.resume();
    if (req.method === 'GET' && path === '/api/v3/contents/generations/tasks') return sendJson(res, 200, { items: tasks.list().map((t) => taskObject(t, origin)), total: tasks.list().length });
    if (req.method !== 'GET' || !id) return sendJson(res, 404, errorBody('NotFound', `No simulated API at ${req.method} ${path}`));
    const polled = tasks.poll(decodeTaskId(id));
    if (!polled) return sendJson(res, 404, errorBody('ResourceNotFound', `The task ${id} does not exist.`));
    if ('errorStatus' in polled) return sendJson(res, polled.errorStatus, simulatedError(polled.errorStatus), polled.errorStatus === 429 ? { 'retry-after': '1' } : {});
    sendJson(res, 200, taskObject(polled.task, origin));
  }

  return simulatorHandler((path) => TASKS_PATH.test(path) || ASSET_PATH.test(path) || isSeedreamPath(path), route);
}
