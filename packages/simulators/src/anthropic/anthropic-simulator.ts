import type * as http from 'node:http';
import {
  answerModelKnob, latencyOf, later, readBody, sendJson as sendPlainJson, serve, simulatorHandler, SNAPSHOT_SUFFIX, trickle,
  type ListenOptions, type RunningSimulator, type SimulatorHandler, type SimulatorHandlerOptions,
} from '../http-kit';
import { createAnthropicBatchRoutes, isMessageBatchesPath } from './batch-route';
import { anthropicErrorBody, encodeEvent, messageBody, messageEvents, simulatedErrorBody } from './anthropic-wire';
import { simulateMessage, type MessagesBody } from './simulated-message';

export interface AnthropicSimulatorOptions extends SimulatorHandlerOptions, ListenOptions {}

export interface AnthropicHandlerOptions extends SimulatorHandlerOptions {
  /** Called with each `POST /v1/messages` once its body is read. */
  onMessagesRequest?: (received: ReceivedRequest) => void;
}

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  /** The raw body text. */
  body: string;
}

export interface AnthropicSimulator extends RunningSimulator {
  /** `url` + `/v1`, the base URL Anthropic clients append `/messages` to. */
  readonly baseUrl: string;
  /** The last `POST /v1/messages` received, for tests that check what a client sent. */
  readonly lastRequest: ReceivedRequest | undefined;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';
/** The top-level fields each endpoint has; the API refuses any other ("<field>: Extra inputs are not permitted"). */
const COUNT_TOKENS_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers', 'context_management', 'output_format']);
const MESSAGES_FIELDS = new Set([
  ...COUNT_TOKENS_FIELDS, 'max_tokens', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_k', 'top_p', 'service_tier', 'container',
]);
/** Events written before `sim-drop` cuts the connection: message_start, block start, ping, one delta. */
const EVENTS_BEFORE_DROP = 4;

/** An Anthropic messages upstream on loopback alone. */
export async function startAnthropicSimulator(options: AnthropicSimulatorOptions = {}): Promise<AnthropicSimulator> {
  let lastRequest: ReceivedRequest | undefined;
  const handle = createAnthropicHandler({ ...options, onMessagesRequest: (received) => (lastRequest = received) });
  return serve(handle, handle.notFound, options, (url) => ({
    baseUrl: `${url}/v1`,
    get lastRequest() {
      return lastRequest;
    },
  }));
}

/**
 * `POST /v1/messages`, `POST /v1/messages/count_tokens` and the message batches API, behind an `x-api-key`,
 * with `anthropic-version` required.
 */
export function createAnthropicHandler(options: AnthropicHandlerOptions = {}): SimulatorHandler {
  let callCounter = 0;
  const latencyDefault = options.latencyMs ?? 0;
  const fixtures = options.fixtures ?? {};
  const batchRoutes = createAnthropicBatchRoutes((res, status, body) => sendJson(res, status, body, `req_sim${(++callCounter).toString(36).padStart(10, '0')}`));

  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    const callId = (++callCounter).toString(36).padStart(10, '0');
    const requestId = `req_sim${callId}`;
    const apiKey = req.headers['x-api-key'];
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      req.resume();
      return sendJson(res, 401, anthropicErrorBody('authentication_error', 'x-api-key header is required', requestId), requestId);
    }
    if (isMessageBatchesPath(path)) {
      if (typeof req.headers['anthropic-version'] !== 'string') {
        req.resume();
        return sendJson(res, 400, anthropicErrorBody('invalid_request_error', 'anthropic-version: header is required', requestId), requestId);
      }
      return readBody(req, MAX_BODY_BYTES, () => sendJson(res, 413, simulatedErrorBody(413, '', requestId), requestId), (buffer) => batchRoutes.route(req, res, path, buffer.toString('utf8')));
    }
    if (req.method !== 'POST' || (path !== '/v1/messages' && path !== COUNT_TOKENS_PATH)) {
      req.resume();
      return sendJson(res, 404, anthropicErrorBody('not_found_error', 'Not Found', requestId), requestId);
    }
    readBody(req, MAX_BODY_BYTES, () => sendJson(res, 413, simulatedErrorBody(413, '', requestId), requestId), (buffer) => {
      const raw = buffer.toString('utf8');
      if (path === COUNT_TOKENS_PATH) return handleCountTokens(req, res, raw, requestId);
      options.onMessagesRequest?.({ headers: req.headers, body: raw });
      handleMessages(req, res, raw, callId, requestId);
    });
  }

  /** The common checks of both endpoints; null when an error was sent. */
  function parseBody(req: http.IncomingMessage, res: http.ServerResponse, raw: string, requestId: string): MessagesBody | null {
    const invalid = (message: string) => { sendJson(res, 400, anthropicErrorBody('invalid_request_error', message, requestId), requestId); return null; };
    if (typeof req.headers['anthropic-version'] !== 'string') return invalid('anthropic-version: header is required');
    let body: MessagesBody;
    try {
      body = JSON.parse(raw) as MessagesBody;
    } catch {
      return invalid('There was an issue with your request body: the body is not valid JSON.');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid('The request body must be a JSON object.');
    const known = req.url?.startsWith(COUNT_TOKENS_PATH) ? COUNT_TOKENS_FIELDS : MESSAGES_FIELDS;
    const extra = Object.keys(body).find((field) => !known.has(field));
    if (extra !== undefined) return invalid(`${extra}: Extra inputs are not permitted`);
    if (typeof body.model !== 'string' || body.model === '') return invalid('model: Field required');
    if (!Array.isArray(body.messages) || body.messages.length === 0) return invalid('messages: at least one message is required');
    return body;
  }

  /** `POST /v1/messages/count_tokens`: the prompt's input tokens, counted as a message call would (no max_tokens, nothing generated). */
  function handleCountTokens(req: http.IncomingMessage, res: http.ServerResponse, raw: string, requestId: string): void {
    const body = parseBody(req, res, raw, requestId);
    if (!body) return;
    const { inputTokens } = simulateMessage({ ...body, max_tokens: 1 }, { toolUseId: 'toolu_count' });
    sendJson(res, 200, { input_tokens: inputTokens }, requestId);
  }

  function handleMessages(req: http.IncomingMessage, res: http.ServerResponse, raw: string, callId: string, requestId: string): void {
    const body = parseBody(req, res, raw, requestId);
    if (!body) return;
    if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
      return sendJson(res, 400, anthropicErrorBody('invalid_request_error', 'max_tokens: Field required', requestId), requestId);
    }

    const model = body.model;
    const latency = latencyOf(req, latencyDefault);
    const knob = {
      sendJson: (status: number, b: unknown, headers?: http.OutgoingHttpHeaders) => sendJson(res, status, b, requestId, headers),
      errorBody: (status: number) => simulatedErrorBody(status, model, requestId),
    };
    if (answerModelKnob(res, model, latency, fixtures, knob)) return;

    const message = simulateMessage(body, { toolUseId: `toolu_sim${callId}` });
    const info = { id: `msg_sim${callId}`, model: model + SNAPSHOT_SUFFIX };
    if (body.stream !== true) {
      if (model === 'sim-drop') return later(res, latency, () => res.destroy());
      return later(res, latency, () => sendJson(res, 200, messageBody(info, message), requestId));
    }
    later(res, latency, () => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId });
      const events = messageEvents(info, message).map(encodeEvent);
      if (model === 'sim-drop') {
        res.write(events.slice(0, EVENTS_BEFORE_DROP).join(''), () => res.destroy());
        return;
      }
      if (model === 'sim-trickle') return trickle(res, events);
      // message_start goes out on its own (the "first byte"); the rest in one write keeps the simulator cheap.
      res.write(events[0]);
      res.end(events.slice(1).join(''));
    });
  }

  return simulatorHandler((path) => path === '/v1/messages' || path === COUNT_TOKENS_PATH || isMessageBatchesPath(path), route);
}

/** Anthropic answers carry their request id in a `request-id` header. */
function sendJson(res: http.ServerResponse, status: number, body: unknown, requestId: string, headers: http.OutgoingHttpHeaders = {}): void {
  sendPlainJson(res, status, body, { 'request-id': requestId, ...headers });
}
