import type * as http from 'node:http';
import {
  answerModelKnob, latencyOf, later, readBody, sendJson as sendPlainJson, serve, simulatorHandler, SNAPSHOT_SUFFIX,
  type ListenOptions, type ReplayStream, type RunningSimulator, type SimulatorHandler, type SimulatorHandlerOptions,
} from '../http-kit';
import { checkGeminiRequest } from './gemini-request-check';
import { generateContentBody, geminiErrorBody, INVALID_KEY_BODY, MISSING_KEY_BODY, simulatedErrorBody, streamEvents } from './gemini-wire';
import { simulateGeminiAnswer, type GeminiRequestBody } from './simulated-gemini-answer';

export interface GeminiSimulatorOptions extends SimulatorHandlerOptions, ListenOptions {}

export interface GeminiSimulator extends RunningSimulator {
  /** `url` + `/v1beta`, what Gemini clients call the base URL. */
  readonly baseUrl: string;
}

/** The API key the simulator treats as revoked: answered as Gemini answers a bad key (400 API_KEY_INVALID). */
export const GEMINI_SIM_INVALID_KEY = 'sim-invalid-key';

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const API_VERSIONS = ['/v1beta/models/', '/v1/models/'];
/** Replayed fixtures are streams when they start with `data:`, labelled as Gemini labels them. */
const REPLAY_STREAM: ReplayStream = { prefixes: ['data:'], contentType: 'text/event-stream' };

/** A Gemini `generateContent` / `streamGenerateContent` upstream on loopback, deterministic and cheap. */
export async function startGeminiSimulator(options: GeminiSimulatorOptions = {}): Promise<GeminiSimulator> {
  const handle = createGeminiHandler(options);
  return serve(handle, handle.notFound, options, (url) => ({ baseUrl: `${url}/v1beta` }));
}

/**
 * `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent` (also under `/v1/models/`) behind an
 * `x-goog-api-key`. Takes every `/v1beta/` path and any `/v1/models/{model}:{method}`; the others it does not have
 * answer 404 in Gemini's shape.
 */
export function createGeminiHandler(options: SimulatorHandlerOptions = {}): SimulatorHandler {
  let callCounter = 0;
  const latencyDefault = options.latencyMs ?? 0;
  const fixtures = options.fixtures ?? {};

  function route(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
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
    const sse = new URLSearchParams((req.url ?? '/').split('?', 2)[1] ?? '').get('alt') === 'sse';
    const tooLarge = () => sendJson(res, 413, geminiErrorBody(413, 'Request payload size exceeds the limit.'));
    readBody(req, MAX_BODY_BYTES, tooLarge, (raw) => handle(req, res, raw, target.model, target.method === 'streamGenerateContent', sse));
  }

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

    const knob = {
      sendJson: (status: number, b: unknown, headers?: http.OutgoingHttpHeaders) => sendJson(res, status, b, headers),
      errorBody: (status: number) => simulatedErrorBody(status, model),
      stream: REPLAY_STREAM,
    };
    if (answerModelKnob(res, model, latency, fixtures, knob)) return;

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

  return simulatorHandler((path) => path.startsWith('/v1beta/') || parseModelPath(path) !== undefined, route);
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

/** Gemini answers JSON with an explicit charset. */
function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  sendPlainJson(res, status, body, { 'content-type': 'application/json; charset=UTF-8', ...headers });
}
