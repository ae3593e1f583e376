import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNAPSHOT_SUFFIX, type SimulatorFixture } from '../openai/openai-simulator';
import { anthropicErrorBody, encodeEvent, messageBody, messageEvents, simulatedErrorBody } from './anthropic-wire';
import { simulateMessage, type MessagesBody } from './simulated-message';

export interface AnthropicSimulatorOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay before the response (for streams: before the first byte); `x-sim-latency-ms` overrides it. */
  latencyMs?: number;
  /** Canned answers replayed byte for byte for model `sim-fixture-<name>`. */
  fixtures?: Record<string, SimulatorFixture>;
}

export interface ReceivedRequest {
  headers: http.IncomingHttpHeaders;
  /** The raw body text. */
  body: string;
}

export interface AnthropicSimulator {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** `url` + `/v1`, the base URL Anthropic clients append `/messages` to. */
  readonly baseUrl: string;
  readonly port: number;
  /** HTTP requests received so far. */
  readonly requests: number;
  /** The last `POST /v1/messages` received, for tests that check what a client sent. */
  readonly lastRequest: ReceivedRequest | undefined;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Events written before `sim-drop` cuts the connection: message_start, block start, ping, one delta. */
const EVENTS_BEFORE_DROP = 4;

export async function startAnthropicSimulator(options: AnthropicSimulatorOptions = {}): Promise<AnthropicSimulator> {
  let requests = 0;
  let callCounter = 0;
  let lastRequest: ReceivedRequest | undefined;
  const latencyDefault = options.latencyMs ?? 0;
  const fixtures = options.fixtures ?? {};

  const server = http.createServer({ keepAlive: true, keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    requests++;
    const callId = (++callCounter).toString(36).padStart(10, '0');
    const requestId = `req_sim${callId}`;
    const path = (req.url ?? '/').split('?', 1)[0];
    const apiKey = req.headers['x-api-key'];
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      req.resume();
      return sendJson(res, 401, anthropicErrorBody('authentication_error', 'x-api-key header is required', requestId), requestId);
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      req.resume();
      return sendJson(res, 404, anthropicErrorBody('not_found_error', 'Not Found', requestId), requestId);
    }
    readBody(req, res, requestId, (raw) => {
      lastRequest = { headers: req.headers, body: raw };
      handleMessages(req, res, raw, callId, requestId);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  function handleMessages(req: http.IncomingMessage, res: http.ServerResponse, raw: string, callId: string, requestId: string): void {
    const invalid = (message: string) => sendJson(res, 400, anthropicErrorBody('invalid_request_error', message, requestId), requestId);
    if (typeof req.headers['anthropic-version'] !== 'string') return invalid('anthropic-version: header is required');
    let body: MessagesBody;
    try {
      body = JSON.parse(raw) as MessagesBody;
    } catch {
      return invalid('There was an issue with your request body: the body is not valid JSON.');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return invalid('The request body must be a JSON object.');
    if (typeof body.model !== 'string' || body.model === '') return invalid('model: Field required');
    if (!Array.isArray(body.messages) || body.messages.length === 0) return invalid('messages: at least one message is required');
    if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return invalid('max_tokens: Field required');

    const model = body.model;
    const latency = latencyOf(req, latencyDefault);
    if (model.startsWith('sim-fixture-')) {
      const fixture = fixtures[model.slice('sim-fixture-'.length)];
      if (!fixture) return sendJson(res, 404, simulatedErrorBody(404, model, requestId), requestId);
      return later(res, latency, () => replay(res, fixture));
    }
    const errorStatus = simulatedErrorStatus(model);
    if (errorStatus !== undefined) {
      const headers: http.OutgoingHttpHeaders = errorStatus === 429 ? { 'retry-after': '1' } : {};
      return later(res, latency, () => sendJson(res, errorStatus, simulatedErrorBody(errorStatus, model, requestId), requestId, headers));
    }

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
      // message_start goes out on its own (the "first byte"); the rest in one write keeps the simulator cheap.
      res.write(events[0]);
      res.end(events.slice(1).join(''));
    });
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
    get lastRequest() {
      return lastRequest;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function readBody(req: http.IncomingMessage, res: http.ServerResponse, requestId: string, onBody: (raw: string) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  req.on('data', (part: Buffer) => {
    size += part.length;
    if (size <= MAX_BODY_BYTES) parts.push(part);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return sendJson(res, 413, simulatedErrorBody(413, '', requestId), requestId);
    onBody(Buffer.concat(parts).toString('utf8'));
  });
}

function latencyOf(req: http.IncomingMessage, fallback: number): number {
  const header = req.headers['x-sim-latency-ms'];
  const value = typeof header === 'string' ? Number(header) : NaN;
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Runs `respond` after `ms`, unless the client went away meanwhile. */
function later(res: http.ServerResponse, ms: number, respond: () => void): void {
  if (ms <= 0) return respond();
  const timer = setTimeout(respond, ms);
  res.once('close', () => clearTimeout(timer));
}

function simulatedErrorStatus(model: string): number | undefined {
  if (!model.startsWith('sim-error-')) return undefined;
  const status = Number(model.slice('sim-error-'.length));
  return Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

function replay(res: http.ServerResponse, fixture: SimulatorFixture): void {
  const isStream = fixture.body.startsWith('event:') || fixture.body.startsWith('data:');
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

function sendJson(res: http.ServerResponse, status: number, body: unknown, requestId: string, headers: http.OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': requestId, ...headers });
  res.end(text);
}
