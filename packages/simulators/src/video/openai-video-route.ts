import type * as http from 'node:http';
import { answerModelKnob, sendJson } from '../http-kit';
import { openAIErrorBody, simulatedErrorBody } from '../openai/openai-wire';
import { decodeTaskId, simulatedMp4, SimVideoTasks, type SimVideoTask } from './video-tasks';

/**
 * OpenAI's videos API: `POST /v1/videos` (JSON: model, prompt, size, seconds as a string), `GET /v1/videos`,
 * `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content` (the mp4; 400 before the video is completed). Task
 * behaviour and knobs: see video-tasks.ts; model `sim-error-<status>` answers the create with that status.
 */
const SIZES = ['720x1280', '1280x720', '1024x1792', '1792x1024'];
const SECONDS = ['4', '8', '12'];
const VIDEO_PATH = /^\/v1\/videos(?:\/([^/]+)(\/content)?)?$/;

export const isOpenAIVideoPath = (path: string) => VIDEO_PATH.test(path);

const STATUS: Record<SimVideoTask['status'], string> = { queued: 'queued', running: 'in_progress', succeeded: 'completed', failed: 'failed' };

function videoObject(task: SimVideoTask) {
  const completed = task.status === 'succeeded';
  return {
    id: task.id, object: 'video', model: task.model, status: STATUS[task.status], progress: task.progress, created_at: task.createdAt,
    completed_at: completed ? task.updatedAt : null, expires_at: completed ? task.updatedAt + 3600 : null,
    size: task.params.size, seconds: String(task.duration), quality: 'standard', remixed_from_video_id: null, error: task.error,
  };
}

export function createOpenAIVideoRoutes(latencyMs: () => number) {
  const tasks = new SimVideoTasks('video_sim');

  function create(res: http.ServerResponse, raw: Buffer): void {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, openAIErrorBody('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
    }
    if (typeof body?.model !== 'string' || body.model === '') return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'model'.", 'invalid_request_error', 'model', 'missing_required_parameter'));
    const model = body.model;
    if (answerModelKnob(res, model, latencyMs(), {}, { errorBody: (status) => simulatedErrorBody(status, model) })) return;
    if (typeof body.prompt !== 'string' || body.prompt === '') return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'prompt'.", 'invalid_request_error', 'prompt', 'missing_required_parameter'));
    const size = body.size ?? '720x1280';
    const seconds = body.seconds ?? '4';
    if (typeof size !== 'string' || !SIZES.includes(size)) return sendJson(res, 400, openAIErrorBody(`Invalid value: '${String(size)}'. Supported values are: ${SIZES.map((s) => `'${s}'`).join(', ')}.`, 'invalid_request_error', 'size', 'invalid_value'));
    if (typeof seconds !== 'string' || !SECONDS.includes(seconds)) return sendJson(res, 400, openAIErrorBody(`Invalid value: '${String(seconds)}'. Supported values are: ${SECONDS.map((s) => `'${s}'`).join(', ')}.`, 'invalid_request_error', 'seconds', 'invalid_value'));
    const unknown = Object.keys(body).find((k) => !['model', 'prompt', 'size', 'seconds'].includes(k));
    if (unknown) return sendJson(res, 400, openAIErrorBody(`Unknown parameter: '${unknown}'.`, 'invalid_request_error', unknown, 'unknown_parameter'));
    sendJson(res, 200, videoObject(tasks.create(model, body.prompt, Number(seconds), { size })));
  }

  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string, raw: Buffer): void {
    const [, rawId, content] = VIDEO_PATH.exec(path) ?? [];
    const id = rawId === undefined ? undefined : decodeTaskId(rawId);
    if (req.method === 'POST' && !id) return create(res, raw);
    if (req.method === 'GET' && !id) return sendJson(res, 200, { object: 'list', data: tasks.list().map(videoObject), has_more: false });
    if (req.method !== 'GET' || !id) return sendJson(res, 405, openAIErrorBody(`Method ${req.method} not allowed`, 'invalid_request_error', null, null));
    const missing = () => sendJson(res, 404, openAIErrorBody(`Video with id '${id}' not found.`, 'invalid_request_error', null, 'video_not_found'));
    if (content) {
      const task = tasks.get(id);
      if (!task) return missing();
      if (task.status !== 'succeeded') return sendJson(res, 400, openAIErrorBody(`Video is not ready yet, use GET /v1/videos/${id} to check status.`, 'invalid_request_error', null, 'video_not_ready'));
      const mp4 = simulatedMp4(task.id, task.duration);
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': mp4.length });
      return void res.end(mp4);
    }
    const polled = tasks.poll(id);
    if (!polled) return missing();
    if ('errorStatus' in polled) return sendJson(res, polled.errorStatus, simulatedErrorBody(polled.errorStatus, 'video'), polled.errorStatus === 429 ? { 'retry-after': '1' } : {});
    sendJson(res, 200, videoObject(polled.task));
  }

  return { route };
}
