import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleResponses } from './responses-route';
import { answer } from './simulated-chat';
import { chatCompletionBody, chatCompletionChunks, openAIErrorBody, simulatedErrorBody } from './openai-wire';

/** A canned upstream answer, replayed byte for byte for model `sim-fixture-<name>`. */
export interface SimulatorFixture {
  status?: number;
  headers?: Record<string, string>;
  /** Raw body: a JSON document or a `text/event-stream`. */
  body: string;
  /** Destroys the connection after writing the body, as a dropped upstream would. */
  dropConnection?: boolean;
}

export interface OpenAISimulatorOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay before the response (for streams: before the first byte); `x-sim-latency-ms` overrides it. */
  latencyMs?: number;
  fixtures?: Record<string, SimulatorFixture>;
}

export interface OpenAISimulator {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** `url` + `/v1`, what OpenAI clients call the base URL. */
  readonly baseUrl: string;
  readonly port: number;
  /** HTTP requests received so far. */
  readonly requests: number;
  close(): Promise<void>;
}

/** The model name suffix naming the "served snapshot", as real providers do. */
export const SNAPSHOT_SUFFIX = '-2026-01-01';

const MODELS = ['gpt-4o-mini', 'gpt-4.1', 'sim-tools'];
const MAX_BODY_BYTES = 16 * 1024 * 1024;

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
  tools?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
}

export async function startOpenAISimulator(options: OpenAISimulatorOptions = {}): Promise<OpenAISimulator> {
  let requests = 0;
  let callCounter = 0;
  const latencyDefault = options.latencyMs ?? 0;
  const fixtures = options.fixtures ?? {};

  const server = http.createServer({ keepAlive: true, keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    requests++;
    const path = (req.url ?? '/').split('?', 1)[0];
    if (!isAuthorized(req)) {
      req.resume();
      return sendJson(res, 401, openAIErrorBody("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", 'invalid_request_error', null, null));
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') return void readBody(req, res, (raw) => handleChat(req, res, raw));
    if (req.method === 'POST' && path === '/v1/responses') {
      return void readBody(req, res, (raw) => handleResponses(res, raw, { latencyMs: latencyOf(req, latencyDefault), fixtures, callId: ++callCounter }));
    }
    req.resume();
    if (req.method === 'GET' && path === '/v1/models') return sendJson(res, 200, modelList());
    sendJson(res, 404, openAIErrorBody(`Invalid URL (${req.method} ${path})`, 'invalid_request_error', null, null));
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  function handleChat(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
    let body: ChatBody;
    try {
      body = JSON.parse(raw.toString('utf8')) as ChatBody;
    } catch {
      return sendJson(res, 400, openAIErrorBody('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
    }
    if (typeof body !== 'object' || body === null) return sendJson(res, 400, openAIErrorBody('The body must be a JSON object.', 'invalid_request_error', null, null));
    if (typeof body.model !== 'string' || body.model === '') return sendJson(res, 400, openAIErrorBody("Missing required parameter: 'model'.", 'invalid_request_error', 'model', 'missing_required_parameter'));
    if (!Array.isArray(body.messages) || body.messages.length === 0) return sendJson(res, 400, openAIErrorBody("Invalid 'messages': empty array. Expected an array with minimum length 1.", 'invalid_request_error', 'messages', 'empty_array'));
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    if (maxTokens !== undefined && maxTokens !== null && !(Number.isInteger(maxTokens) && (maxTokens as number) >= 1)) {
      return sendJson(res, 400, openAIErrorBody('Invalid max tokens: expected an integer of at least 1.', 'invalid_request_error', body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens', 'invalid_value'));
    }
    const model = body.model;
    const latency = latencyOf(req, latencyDefault);

    if (model.startsWith('sim-fixture-')) {
      const fixture = fixtures[model.slice('sim-fixture-'.length)];
      if (!fixture) return sendJson(res, 404, simulatedErrorBody(404, model));
      return later(res, latency, () => replay(res, fixture));
    }
    const errorStatus = simulatedErrorStatus(model);
    if (errorStatus !== undefined) {
      const headers: http.OutgoingHttpHeaders = errorStatus === 429 ? { 'retry-after': '1' } : {};
      return later(res, latency, () => sendJson(res, errorStatus, simulatedErrorBody(errorStatus, model), headers));
    }

    const callId = ++callCounter;
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const toolName = model === 'sim-tools' && tools.length > 0 ? firstToolName(tools) : undefined;
    const result = answer(body.messages, {
      maxTokens: typeof maxTokens === 'number' ? maxTokens : undefined,
      toolName,
      callId: `call_sim${callId.toString(36).padStart(8, '0')}`,
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
        res.write(events[0]);
        res.end(events.slice(1).join('') + 'data: [DONE]\n\n');
      });
    }
    later(res, latency, () => sendJson(res, 200, chatCompletionBody(call, result), { 'x-request-id': requestId }));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  const url = `http://${host}:${port}`;

  return {
    url,
    baseUrl: `${url}/v1`,
    port,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function isAuthorized(req: http.IncomingMessage): boolean {
  const auth = req.headers.authorization;
  return typeof auth === 'string' && auth.startsWith('Bearer ') && auth.slice(7).trim() !== '';
}

function readBody(req: http.IncomingMessage, res: http.ServerResponse, onBody: (raw: Buffer) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  req.on('data', (part: Buffer) => {
    size += part.length;
    if (size <= MAX_BODY_BYTES) parts.push(part);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return sendJson(res, 413, openAIErrorBody('Request body too large.', 'invalid_request_error', null, null));
    onBody(parts.length === 1 ? parts[0] : Buffer.concat(parts));
  });
}

function latencyOf(req: http.IncomingMessage, fallback: number): number {
  const header = req.headers['x-sim-latency-ms'];
  const value = typeof header === 'string' ? Number(header) : NaN;
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Runs `respond` after `ms`, unless the client went away meanwhile. */
export function later(res: http.ServerResponse, ms: number, respond: () => void): void {
  if (ms <= 0) return respond();
  const timer = setTimeout(respond, ms);
  res.once('close', () => clearTimeout(timer));
}

export function simulatedErrorStatus(model: string): number | undefined {
  if (!model.startsWith('sim-error-')) return undefined;
  const status = Number(model.slice('sim-error-'.length));
  return Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

function firstToolName(tools: unknown[]): string {
  const name = (tools[0] as { function?: { name?: unknown } } | null)?.function?.name;
  return typeof name === 'string' ? name : 'tool';
}

export function replay(res: http.ServerResponse, fixture: SimulatorFixture): void {
  const isStream = fixture.body.startsWith('data:') || fixture.body.startsWith('event:');
  res.writeHead(fixture.status ?? 200, {
    'content-type': isStream ? 'text/event-stream; charset=utf-8' : 'application/json',
    ...fixture.headers,
  });
  if (fixture.dropConnection) {
    res.write(fixture.body, () => res.destroy());
    return;
  }
  res.end(fixture.body);
}

function modelList() {
  return { object: 'list', data: MODELS.map((id) => ({ id, object: 'model', created: 1767225600, owned_by: 'system' })) };
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
