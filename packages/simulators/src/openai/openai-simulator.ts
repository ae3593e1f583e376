import type * as http from 'node:http';
import {
  answerModelKnob, latencyOf, later, readBody, sendJson, serve, simulatorHandler, SNAPSHOT_SUFFIX, trickle,
  type ListenOptions, type RunningSimulator, type SimulatorHandler, type SimulatorHandlerOptions,
} from '../http-kit';
import { createOpenAIBatchRoutes, isBatchPath } from './batch-route';
import { createMediaRoutes, IMAGE_FILE_PREFIX, MEDIA_PATHS } from './media-route';
import { handleResponses } from './responses-route';
import { createOpenAIVideoRoutes, isOpenAIVideoPath } from '../video/openai-video-route';
import { answer } from './simulated-chat';
import { chatCompletionBody, chatCompletionChunks, openAIErrorBody, simulatedErrorBody } from './openai-wire';

export { SNAPSHOT_SUFFIX, TRICKLE_INTERVAL_MS, type SimulatorFixture } from '../http-kit';

export interface OpenAISimulatorOptions extends SimulatorHandlerOptions, ListenOptions {}

export interface OpenAISimulator extends RunningSimulator {
  /** `url` + `/v1`, what OpenAI clients call the base URL. */
  readonly baseUrl: string;
}

const MODELS = ['gpt-4o-mini', 'gpt-4.1', 'sim-tools'];
/** Idempotency keys remembered (oldest forgotten first), as a real upstream keeps them for a while only. */
const MAX_REMEMBERED_KEYS = 10_000;
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** The paths the OpenAI handler answers (any method). */
const PATHS = new Set(['/v1/chat/completions', '/v1/responses', '/v1/models']);
/** The chat completion parameters OpenAI has; it refuses any other ("Unrecognized request argument supplied"). */
const CHAT_PARAMETERS = new Set([
  'model', 'messages', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs', 'max_completion_tokens',
  'max_tokens', 'metadata', 'modalities', 'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'prompt_cache_key',
  'prompt_cache_retention', 'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream',
  'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options',
]);

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
  tools?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  response_format?: { type?: unknown } | null;
}

/** An OpenAI upstream on loopback alone: chat completions, responses, the model list, files and batches, images and audio. */
export async function startOpenAISimulator(options: OpenAISimulatorOptions = {}): Promise<OpenAISimulator> {
  const handle = createOpenAIHandler(options);
  return serve(handle, handle.notFound, options, (url) => ({ baseUrl: `${url}/v1` }));
}

/** `POST /v1/chat/completions`, `POST /v1/responses`, `GET /v1/models`, the files and batches APIs and the videos API, each behind a bearer key. */
export function createOpenAIHandler(options: SimulatorHandlerOptions = {}): SimulatorHandler {
  let callCounter = 0;
  /** Non-streaming completions by `Idempotency-Key`: a repeat is answered with the first answer, not generated again. */
  const byIdempotencyKey = new Map<string, { body: unknown; requestId: string }>();
  const latencyDefault = options.latencyMs ?? 0;
  const fixtures = options.fixtures ?? {};
  const batchRoutes = createOpenAIBatchRoutes();
  const videoRoutes = createOpenAIVideoRoutes(() => latencyDefault);
  const mediaRoutes = createMediaRoutes({ latencyMs: (req) => latencyOf(req, latencyDefault), fixtures, baseUrl: (req) => `http://${req.headers.host}` });

  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    // Generated image URLs are presigned: fetched without the API key, like a real provider's.
    if (req.method === 'GET' && path.startsWith(IMAGE_FILE_PREFIX)) {
      req.resume();
      return mediaRoutes.serveImage(res, path);
    }
    if (!isAuthorized(req)) {
      req.resume();
      return sendJson(res, 401, openAIErrorBody("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", 'invalid_request_error', null, null));
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') return read(req, res, (raw) => handleChat(req, res, raw));
    if (isBatchPath(path)) return read(req, res, (raw) => batchRoutes.route(req, res, path, raw));
    if (isOpenAIVideoPath(path)) return read(req, res, (raw) => videoRoutes.route(req, res, path, raw));
    if (req.method === 'POST' && MEDIA_PATHS.has(path)) return read(req, res, (raw) => void mediaRoutes.route(req, res, path, raw));
    if (req.method === 'POST' && path === '/v1/responses') {
      return read(req, res, (raw) => handleResponses(res, raw, { latencyMs: latencyOf(req, latencyDefault), fixtures, callId: ++callCounter }));
    }
    req.resume();
    if (req.method === 'GET' && path === '/v1/models') return sendJson(res, 200, modelList());
    sendJson(res, 404, openAIErrorBody(`Invalid URL (${req.method} ${path})`, 'invalid_request_error', null, null));
  }

  function handleChat(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
    let body: ChatBody;
    try {
      body = JSON.parse(raw.toString('utf8')) as ChatBody;
    } catch {
      return sendJson(res, 400, openAIErrorBody('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
    }
    if (typeof body !== 'object' || body === null) return sendJson(res, 400, openAIErrorBody('The body must be a JSON object.', 'invalid_request_error', null, null));
    const unknown = Object.keys(body).find((field) => !CHAT_PARAMETERS.has(field));
    if (unknown !== undefined) return sendJson(res, 400, openAIErrorBody(`Unrecognized request argument supplied: ${unknown}`, 'invalid_request_error', null, null));
    if (typeof body.model !== 'string' || body.model === '') return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'model'.", 'invalid_request_error', 'model', 'missing_required_parameter'));
    if (!Array.isArray(body.messages) || body.messages.length === 0) return sendJson(res, 400, openAIErrorBody("Invalid 'messages': empty array. Expected an array with minimum length 1.", 'invalid_request_error', 'messages', 'empty_array'));
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    if (maxTokens !== undefined && maxTokens !== null && !(Number.isInteger(maxTokens) && (maxTokens as number) >= 1)) {
      return sendJson(res, 400, openAIErrorBody('Invalid max tokens: expected an integer of at least 1.', 'invalid_request_error', body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens', 'invalid_value'));
    }
    const model = body.model;
    const latency = latencyOf(req, latencyDefault);
    if (answerModelKnob(res, model, latency, fixtures, { errorBody: (status) => simulatedErrorBody(status, model) })) return;

    const idempotencyKey = headerOf(req, 'idempotency-key');
    const remembered = body.stream !== true && idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
    if (remembered) {
      return later(res, latency, () => sendJson(res, 200, remembered.body, { 'x-request-id': remembered.requestId, 'idempotent-replayed': 'true' }));
    }

    const callId = ++callCounter;
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const toolName = model === 'sim-tools' && tools.length > 0 ? firstToolName(tools) : undefined;
    const result = answer(body.messages, {
      maxTokens: typeof maxTokens === 'number' ? maxTokens : undefined,
      toolName,
      callId: `call_sim${callId.toString(36).padStart(8, '0')}`,
      json: body.response_format?.type === 'json_object' || body.response_format?.type === 'json_schema',
    });
    const call = { id: `chatcmpl-sim${callId.toString(36).padStart(10, '0')}`, created: Math.floor(Date.now() / 1000), model: model + SNAPSHOT_SUFFIX };
    const requestId = `req_sim${callId.toString(36).padStart(10, '0')}`;

    if (body.stream === true) {
      const includeUsage = body.stream_options?.include_usage === true;
      return later(res, latency, () => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': requestId });
        // The role chunk goes out on its own (the "first token"); the rest in one write, which keeps the
        // simulator cheap under benchmark load. (res.cork() would drop writes here on Node 24.)
        const events = chatCompletionChunks(call, result, includeUsage).map((data) => `data: ${data}\n\n`);
        if (model === 'sim-trickle') return trickle(res, [...events, 'data: [DONE]\n\n']);
        res.write(events[0]);
        res.end(events.slice(1).join('') + 'data: [DONE]\n\n');
      });
    }
    const completion = chatCompletionBody(call, result);
    if (idempotencyKey) remember(idempotencyKey, { body: completion, requestId });
    later(res, latency, () => sendJson(res, 200, completion, { 'x-request-id': requestId }));
  }

  function remember(key: string, answer: { body: unknown; requestId: string }): void {
    if (byIdempotencyKey.size >= MAX_REMEMBERED_KEYS) byIdempotencyKey.delete(byIdempotencyKey.keys().next().value!);
    byIdempotencyKey.set(key, answer);
  }

  return simulatorHandler((path) => PATHS.has(path) || isBatchPath(path) || isOpenAIVideoPath(path) || MEDIA_PATHS.has(path) || path.startsWith(IMAGE_FILE_PREFIX), route);
}

function isAuthorized(req: http.IncomingMessage): boolean {
  const auth = req.headers.authorization;
  return typeof auth === 'string' && auth.startsWith('Bearer ') && auth.slice(7).trim() !== '';
}

function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}

function read(req: http.IncomingMessage, res: http.ServerResponse, onBody: (raw: Buffer) => void): void {
  readBody(req, MAX_BODY_BYTES, () => sendJson(res, 413, openAIErrorBody('Request body too large.', 'invalid_request_error', null, null)), onBody);
}

function firstToolName(tools: unknown[]): string {
  const name = (tools[0] as { function?: { name?: unknown } } | null)?.function?.name;
  return typeof name === 'string' ? name : 'tool';
}

function modelList() {
  return { object: 'list', data: MODELS.map((id) => ({ id, object: 'model', created: 1767225600, owned_by: 'system' })) };
}
