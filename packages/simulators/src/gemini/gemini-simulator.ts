import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNAPSHOT_SUFFIX, type SimulatorFixture } from '../openai/openai-simulator';
import { checkGeminiRequest } from './gemini-request-check';
import { generateContentBody, geminiErrorBody, INVALID_KEY_BODY, MISSING_KEY_BODY, simulatedErrorBody, streamEvents } from './gemini-wire';
import { simulateGeminiAnswer, type GeminiRequestBody } from './simulated-gemini-answer';

export interface GeminiSimulatorOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay before the response (for streams: before the first byte); `x-sim-latency-ms` overrides it. */
  latencyMs?: number;
  /** Canned answers, replayed byte for byte for model `sim-fixture-<name>`. */
  fixtures?: Record<string, SimulatorFixture>;
}

export interface GeminiSimulator {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** `url` + `/v1beta`, what Gemini clients call the base URL. */
  readonly baseUrl: string;
  readonly port: number;
  /** HTTP requests received so far. */
  readonly requests: number;
  close(): Promise<void>;
}

/** The API key the simulator treats as revoked: answered as Gemini answers a bad key (400 API_KEY_INVALID). */
export const GEMINI_SIM_INVALID_KEY = 'sim-invalid-key';

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const API_VERSIONS = ['/v1beta/models/', '/v1/models/'];

/** A Gemini `generateContent` / `streamGenerateContent` upstream on loopback, deterministic and cheap. */
export async function startGeminiSimulator(options: GeminiSimulatorOptions = {}): Promise<GeminiSimulator> {
  let requests = 0;
  let callCounter = 0;
  const latencyDefault = options.latencyMs ?? 0;
  const fixtures = options.fixtures ?? {};

  const server = http.createServer({ keepAlive: true, keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    requests++;
    const [path, query = ''] = (req.url ?? '/').split('?', 2);
    const target = parseModelPath(path);
    if (req.method !== 'POST' || !target || (target.method !== 'generateContent' && target.method !== 'streamGenerateContent')) {
      req.resume();
      return sendJson(res, 404, geminiErrorBody(404, `Method not found: ${req.method} ${path}`));
    }
    const key = req.headers['x-goog-api-key'];
    if (typeof key !== 'string' || key.trim() === '') {
      req.resume();
      return sendJson(res, 403, MISSING_KEY_BODY);
    }
    if (key === GEMINI_SIM_INVALID_KEY) {
      req.resume();
      return sendJson(res, 400, INVALID_KEY_BODY);
    }
    const sse = new URLSearchParams(query).get('alt') === 'sse';
    readBody(req, res, (raw) => handle(req, res, raw, target.model, target.method === 'streamGenerateContent', sse));
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, model: string, stream: boolean, sse: boolean): void {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return sendJson(res, 400, geminiErrorBody(400, 'Invalid JSON payload received. Unexpected token.'));
    }
    const problem = checkGeminiRequest(body);
    if (problem) return sendJson(res, 400, geminiErrorBody(400, problem));
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

    const answer = simulateGeminiAnswer(body as GeminiRequestBody, { callTools: model === 'sim-tools', refuse: model === 'sim-refusal' });
    const call = { responseId: `simresp${(++callCounter).toString(36).padStart(12, '0')}`, modelVersion: model + SNAPSHOT_SUFFIX };
    if (!stream) return later(res, latency, () => sendJson(res, 200, generateContentBody(call, answer)));

    const events = streamEvents(call, answer);
    later(res, latency, () => {
      if (!sse) return sendJson(res, 200, JSON.parse(`[${events.join(',')}]`));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-content-type-options': 'nosniff' });
      // Gemini ends each event with CRLF CRLF. The first event goes out on its own (the "first token"); the
      // rest in one write, which keeps the simulator cheap under benchmark load.
      const frames = events.map((data) => `data: ${data}\r\n\r\n`);
      if (model === 'sim-drop') {
        res.write(frames[0], () => res.destroy());
        return;
      }
      res.write(frames[0]);
      res.end(frames.slice(1).join(''));
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
    baseUrl: `${url}/v1beta`,
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

/** `/v1beta/models/{model}:{method}` -> its parts; undefined for any other path. */
function parseModelPath(path: string): { model: string; method: string } | undefined {
  const prefix = API_VERSIONS.find((p) => path.startsWith(p));
  if (!prefix) return undefined;
  const rest = path.slice(prefix.length);
  const colon = rest.lastIndexOf(':');
  if (colon <= 0) return undefined;
  try {
    return { model: decodeURIComponent(rest.slice(0, colon)), method: rest.slice(colon + 1) };
  } catch {
    return undefined;
  }
}

function readBody(req: http.IncomingMessage, res: http.ServerResponse, onBody: (raw: Buffer) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  req.on('data', (part: Buffer) => {
    size += part.length;
    if (size <= MAX_BODY_BYTES) parts.push(part);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return sendJson(res, 413, geminiErrorBody(413, 'Request payload size exceeds the limit.'));
    onBody(parts.length === 1 ? parts[0] : Buffer.concat(parts));
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
  const isStream = fixture.body.startsWith('data:');
  res.writeHead(fixture.status ?? 200, { 'content-type': isStream ? 'text/event-stream' : 'application/json', ...fixture.headers });
  if (fixture.dropConnection) {
    res.write(fixture.body, () => res.destroy());
    return;
  }
  res.end(fixture.body);
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
