import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServerSpan, tracingEnabled } from '@gw/platform';

/**
 * What the provider simulators share: reading bodies, the latency knob, the `sim-fixture-*` / `sim-error-*`
 * model knobs, JSON answers, and one way to listen and close. The wire formats themselves live in
 * openai/, anthropic/ and gemini/.
 */

/** A canned upstream answer, replayed byte for byte for model `sim-fixture-<name>`. */
export interface SimulatorFixture {
  status?: number;
  headers?: Record<string, string>;
  /** Raw body: a JSON document or a `text/event-stream`. */
  body: string;
  /** Destroys the connection after writing the body, as a dropped upstream would. */
  dropConnection?: boolean;
  /**
   * Writes the body at once but ends it (the chunked terminator) only this long after, or when the client
   * leaves: a provider that flushes its last event before it closes the body.
   */
  endAfterMs?: number;
}

/** The model name suffix naming the "served snapshot", as real providers do. */
export const SNAPSHOT_SUFFIX = '-2026-01-01';

/** What a format's request handler is configured with. */
export interface SimulatorHandlerOptions {
  /** Delay before the response (for streams: before the first byte); `x-sim-latency-ms` overrides it. */
  latencyMs?: number;
  /** Canned answers replayed byte for byte for model `sim-fixture-<name>`. */
  fixtures?: Record<string, SimulatorFixture>;
}

export interface ListenOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** One wire format's routes: answers a request on its own paths and returns true; returns false, writing nothing, for any other path. */
export interface SimulatorHandler {
  (req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /** How this format's API answers a path it does not have (its 401 or 404): the fallback of a server of this format alone. */
  notFound: RequestListener;
}

/**
 * A handler from a format's `route`, which answers any request the way that API does (its 401 or 404 for
 * paths it does not have): the handler passes `route` the paths `owns` accepts; `notFound` is `route` itself.
 */
export function simulatorHandler(
  owns: (path: string) => boolean,
  route: (req: http.IncomingMessage, res: http.ServerResponse, path: string) => void,
): SimulatorHandler {
  const handle = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const path = requestPath(req);
    if (!owns(path)) return false;
    route(req, res, path);
    return true;
  };
  return Object.assign(handle, { notFound: (req: http.IncomingMessage, res: http.ServerResponse) => route(req, res, requestPath(req)) });
}

/** `GET` answers `{"requests": n}`: the HTTP requests received so far (RunningSimulator.requests). */
export const REQUEST_COUNT_PATH = '/__simulator/requests';

export interface RunningSimulator {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  /** HTTP requests received so far. */
  readonly requests: number;
  close(): Promise<void>;
}

/**
 * Listens with `handle`, answering what it does not take with `notFound`. `more(url)` adds properties to the
 * result (getters stay getters).
 */
export async function serve<T extends object = object>(
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => boolean,
  notFound: RequestListener,
  options: ListenOptions,
  more?: (url: string) => T,
): Promise<RunningSimulator & T> {
  let requests = 0;
  const server = http.createServer({ keepAlive: true, keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    // The count itself, for a test whose simulator runs in another process; not counted.
    if (req.method === 'GET' && requestPath(req) === REQUEST_COUNT_PATH) return sendJson(res, 200, { requests });
    requests++;
    // A traced upstream: its span joins the caller's trace through the traceparent the gateway sends.
    if (tracingEnabled()) {
      const span = startServerSpan('provider-simulator', `${req.method} ${requestPath(req)}`, req.headers);
      res.once('close', () => span.end(res.statusCode));
    }
    if (!handle(req, res)) notFound(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
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
  const running: RunningSimulator = {
    url,
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
  return Object.defineProperties(running, Object.getOwnPropertyDescriptors(more?.(url) ?? {})) as RunningSimulator & T;
}

/** The request path without its query. */
export function requestPath(req: http.IncomingMessage): string {
  return (req.url ?? '/').split('?', 1)[0];
}

/** Collects the body; past `maxBytes` it keeps reading but answers `tooLarge()` instead of calling `onBody`. */
export function readBody(req: http.IncomingMessage, maxBytes: number, tooLarge: () => void, onBody: (raw: Buffer) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  req.on('data', (part: Buffer) => {
    size += part.length;
    if (size <= maxBytes) parts.push(part);
  });
  req.on('end', () => {
    if (size > maxBytes) return tooLarge();
    onBody(parts.length === 1 ? parts[0] : Buffer.concat(parts));
  });
}

/** The delay for this request: `x-sim-latency-ms` when it is a non-negative number, else `fallback`. */
export function latencyOf(req: http.IncomingMessage, fallback: number): number {
  const header = req.headers['x-sim-latency-ms'];
  const value = typeof header === 'string' ? Number(header) : NaN;
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

/** Model `sim-trickle` streams one event per this interval: a stream long enough to fail in the middle of. */
export const TRICKLE_INTERVAL_MS = 200;

/** Writes one event per `TRICKLE_INTERVAL_MS` until all are out (then ends), or the client left. */
export function trickle(res: http.ServerResponse, events: string[]): void {
  let next = 0;
  const timer = setInterval(() => {
    res.write(events[next++]);
    if (next === events.length) {
      clearInterval(timer);
      res.end();
    }
  }, TRICKLE_INTERVAL_MS);
  res.once('close', () => clearInterval(timer));
}

/** Runs `respond` after `ms`, unless the client went away meanwhile. */
export function later(res: http.ServerResponse, ms: number, respond: () => void): void {
  if (ms <= 0) return respond();
  const timer = setTimeout(respond, ms);
  res.once('close', () => clearTimeout(timer));
}

/** The status of a `sim-error-<status>` model (400..599), else undefined. */
export function simulatedErrorStatus(model: string): number | undefined {
  if (!model.startsWith('sim-error-')) return undefined;
  const status = Number(model.slice('sim-error-'.length));
  return Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

/** How a replayed fixture is recognised as a stream, and the content type it then gets. */
export interface ReplayStream {
  prefixes: readonly string[];
  contentType: string;
}

const SSE: ReplayStream = { prefixes: ['data:', 'event:'], contentType: 'text/event-stream; charset=utf-8' };

export function replay(res: http.ServerResponse, fixture: SimulatorFixture, stream: ReplayStream = SSE): void {
  const isStream = stream.prefixes.some((p) => fixture.body.startsWith(p));
  res.writeHead(fixture.status ?? 200, {
    'content-type': isStream ? stream.contentType : 'application/json',
    ...fixture.headers,
  });
  if (fixture.dropConnection) {
    res.write(fixture.body, () => res.destroy());
    return;
  }
  if (fixture.endAfterMs !== undefined) {
    res.write(fixture.body);
    later(res, fixture.endAfterMs, () => res.end());
    return;
  }
  res.end(fixture.body);
}

/** A JSON answer; `headers` may override the content type. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** How a format answers the model knobs. */
export interface KnobReplies {
  /** Sends a JSON answer the format's way (its content type and headers); default: `sendJson`. */
  sendJson?(status: number, body: unknown, headers?: http.OutgoingHttpHeaders): void;
  /** The format's error body for `sim-error-<status>`, and with 404 for an unknown fixture. */
  errorBody(status: number): unknown;
  stream?: ReplayStream;
}

/**
 * The model knobs every format shares: `sim-fixture-<name>` replays that fixture (404 at once when there is
 * none) and `sim-error-<status>` answers that status (429 with `retry-after: 1`), both after `latencyMs`.
 * Returns false, doing nothing, for any other model.
 */
export function answerModelKnob(
  res: http.ServerResponse,
  model: string,
  latencyMs: number,
  fixtures: Record<string, SimulatorFixture>,
  replies: KnobReplies,
): boolean {
  const send = replies.sendJson ?? ((status: number, body: unknown, headers?: http.OutgoingHttpHeaders) => sendJson(res, status, body, headers));
  if (model.startsWith('sim-fixture-')) {
    const fixture = fixtures[model.slice('sim-fixture-'.length)];
    if (!fixture) send(404, replies.errorBody(404));
    else later(res, latencyMs, () => replay(res, fixture, replies.stream));
    return true;
  }
  const status = simulatedErrorStatus(model);
  if (status === undefined) return false;
  const headers: http.OutgoingHttpHeaders = status === 429 ? { 'retry-after': '1' } : {};
  later(res, latencyMs, () => send(status, replies.errorBody(status), headers));
  return true;
}
