import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AuthenticationError, errorEnvelope, NotFoundError, OverloadedError, toGatewayError, UnavailableError, UnsupportedMediaTypeError, type GatewayError } from './errors';
import type { Health } from './health';
import { fromExpressError } from './http-errors';
import { answerParserErrors } from './http-parser-errors';
import { newTraceId } from './ids';
import { H_TRACE_ID, type Identity } from './identity';
import { IDENTITY_HEADER, type IdentityVerifier } from './identity-token';
import type { HandedIdentities } from './handed-identity';
import { lazyChild, type Logger } from './logger';
import type { Metrics } from './metrics';
import { startServerSpan, traceIdOfTraceparent, tracingEnabled, type ServerSpan } from './tracing';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      traceId: string;
      /** The verified identity of the caller; null on an anonymous route (and before verification). */
      identity: Identity | null;
      /** The service's logger bound to this request's trace id (set before the body parser and the routes); routes add `requestId` once they know it. */
      log: Logger;
      /** This request's server span when tracing is on. */
      span?: ServerSpan;
    }
  }
}

export interface HttpAppOptions {
  logger: Logger;
  health: Health;
  metrics?: Metrics;
  /** JSON body limit in bytes; null leaves bodies unread (the edge streams them on). */
  bodyLimitBytes: number | null;
  /**
   * `internal` (default): a service behind the edge, which believes the edge's trace id and serves probes and
   * /metrics. `public`: the edge's port facing clients: a fresh trace id per request (a client's is never
   * believed) and no probes or /metrics (they listen on the admin port).
   */
  exposure?: 'internal' | 'public';
  /**
   * Verifies the signed identity of every request except the probes and /metrics (or takes the identity a caller
   * in this process handed in with the request). Every service passes one; only tests of the shell leave it out.
   */
  identity?: IdentityVerifier;
  /** Identities callers in this process hand in with their requests (`RunningService.handIn`), believed like tokens. */
  handedIdentities?: HandedIdentities;
  /** One info line per request (`ACCESS_LOG`). */
  accessLog?: boolean;
  /** Names the tracer of this app's server spans (the service's name). */
  name?: string;
}

const PROBE_PATHS = new Set(['/livez', '/readyz', '/metrics']);

/**
 * The common express shell of every service: trace id, JSON body with a size limit, probes, metrics and
 * the one error handler that renders the spec's envelope. Routers are mounted between `app` creation and
 * `finish(app)`.
 */
export function createHttpApp(opts: HttpAppOptions) {
  const internal = opts.exposure !== 'public';
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const fromEdge = internal ? req.headers[H_TRACE_ID] : undefined;
    req.identity = null;
    // Probes are polled every few seconds by the orchestrator: no span for them.
    if (tracingEnabled() && !PROBE_PATHS.has(req.path)) {
      const span = startServerSpan(opts.name ?? 'http', req.method, req.headers, { 'http.request.method': req.method, 'url.path': req.path });
      req.span = span;
      req.traceId = typeof fromEdge === 'string' && fromEdge ? fromEdge : span.traceId;
      // Named by the route that answered (`POST /v1/chat/completions`), known only at the end.
      res.once('close', () => span.end(res.statusCode, req.route?.path ? `${req.method} ${String(req.route.path)}` : undefined));
      res.setHeader('x-trace-id', req.traceId);
      span.run(next);
      return;
    }
    // The edge honours a client's W3C traceparent (its trace id becomes the request's); services believe the edge.
    const given = internal ? fromEdge : traceIdOfTraceparent(req.headers.traceparent);
    req.traceId = typeof given === 'string' && given ? given : newTraceId();
    res.setHeader('x-trace-id', req.traceId);
    next();
  });
  if (opts.metrics) app.use(opts.metrics.httpMiddleware());
  if (internal) mountProbes(app, opts.health, opts.metrics);
  // After the probes, which would flood it; before identity and the body parser, whose refusals it must show.
  // The trace id is read when the request ends, so it is the verified one.
  if (opts.accessLog) app.use(accessLog(opts.logger, (req) => req.traceId));
  if (opts.identity) app.use(verifyIdentity(opts.identity, opts.handedIdentities));
  // Bound once the trace id is final; anything refused before this logs through the service's logger.
  app.use((req, _res, next) => {
    req.log = lazyChild(opts.logger, { traceId: req.traceId });
    next();
  });
  if (opts.bodyLimitBytes !== null) {
    app.use(express.json({ limit: opts.bodyLimitBytes, type: ['application/json', 'application/*+json'] }));
    app.use(refuseBodiesOfOtherTypes);
    // The body arrives on socket events: the routes run in the request's span again.
    app.use((req, _res, next) => (req.span ? req.span.run(next) : next()));
  }
  return app;
}

/** Whether the request's body is a multipart form (uploads), which the route that takes it reads itself. */
export function isMultipartForm(req: IncomingMessage): boolean {
  return /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');
}

/**
 * A body the JSON parser did not take is multipart (read by the route that takes uploads) or a mistake, most
 * often `curl -d`, which sends JSON as form-urlencoded: refused naming the content-type, where the route would
 * otherwise see no body and say only that it needs one.
 */
function refuseBodiesOfOtherTypes(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (req.body !== undefined || !hasBody || isMultipartForm(req)) {
    next();
    return;
  }
  next(new UnsupportedMediaTypeError('This API reads request bodies sent as application/json, and uploads as multipart/form-data', 'content-type'));
}

/** `/livez`, `/readyz` (from the service's Health) and `/metrics`: on the service port, or the edge's admin port. */
export function mountProbes(app: express.Express, health: Health, metrics?: Metrics): void {
  app.get('/livez', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    const report = await health.report();
    res.status(report.ready ? 200 : 503).json(report);
  });
  if (metrics) {
    app.get('/metrics', async (_req, res) => {
      res.setHeader('content-type', metrics.registry.contentType);
      res.send(await metrics.registry.metrics());
    });
  }
}

/**
 * Believes only a token bound to this request (method and path with query, as the edge forwarded them), or an
 * identity handed in with the request object by a caller in this process.
 */
function verifyIdentity(verifier: IdentityVerifier, handed?: HandedIdentities): express.RequestHandler {
  return (req, res, next) => {
    const inProcess = handed?.take(req);
    if (inProcess) {
      req.identity = inProcess.identity;
      req.traceId = inProcess.traceId;
      res.setHeader('x-trace-id', inProcess.traceId);
      next();
      return;
    }
    const header = req.headers[IDENTITY_HEADER];
    const claims = verifier.verify(typeof header === 'string' ? header : undefined, { method: req.method, path: req.originalUrl });
    req.identity = claims.identity;
    if (claims.traceId) {
      req.traceId = claims.traceId;
      res.setHeader('x-trace-id', claims.traceId);
    }
    next();
  };
}

/** The verified caller of a route that needs an API key. */
export function requireIdentity(req: Request): Identity {
  if (!req.identity) throw new AuthenticationError();
  return req.identity;
}

export interface ErrorRendering {
  /**
   * Paths (and everything under them) answering plain JSON, `{"error":{"code":<status>,"message","param"}}`
   * (the key endpoints' OpenRouter shape), instead of the spec's envelope.
   */
  plainJsonErrorPaths?: string[];
}

/** Mounts the one error renderer last: unknown routes and every thrown error, including the body parser's. */
export function finishHttpApp(app: express.Express, logger: Logger, rendering: ErrorRendering = {}): void {
  const plainPaths = rendering.plainJsonErrorPaths ?? [];
  app.use((req: Request) => {
    throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = fromExpressError(err, req);
    logRequestError(req.log ?? logger.child({ traceId: req.traceId }), err, e, req.path);
    const plain = plainPaths.some((p) => req.path === p || req.path.startsWith(`${p}/`));
    sendError(res, e, req.traceId, plain ? 'plain-json' : 'envelope');
  });
}

/**
 * Our failures are errors with their stack; a caller's mistake is routine and at most a debug line. A 501 is
 * the caller's too: it asked for a feature this gateway does not offer. A request shed under load is counted by
 * the metric of the budget that shed it; a line with a stack for each would flood the log just when it matters.
 */
export function logRequestError(logger: Logger, err: unknown, mapped: GatewayError, path: string): void {
  if (mapped.status >= 500 && mapped.status !== 501 && !(mapped instanceof OverloadedError)) logger.error({ err, path }, 'request failed');
  else logger.debug({ status: mapped.status, code: mapped.code, param: mapped.param, path }, 'request refused');
}

/**
 * One line per finished request: method, path (never the query, which may carry secrets), status, duration,
 * trace id and the call's request id when it has one. Off by default; `ACCESS_LOG=true` turns it on.
 */
export function accessLog(logger: Logger, traceIdOf: (req: Request, res: Response) => string): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('close', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info({
        method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, durationMs: Math.round(durationMs * 10) / 10,
        traceId: traceIdOf(req, res), requestId: res.getHeader('x-request-id'), aborted: !res.writableFinished || undefined,
      }, 'access');
    });
    next();
  };
}

export function sendError(res: Response, err: unknown, traceId: string, style: 'envelope' | 'plain-json' = 'envelope'): void {
  const e = toGatewayError(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
  res.status(e.status).json(style === 'envelope' ? errorEnvelope(e, traceId) : { error: { code: e.status, message: e.message, param: e.param } });
}

/** Request line and headers a public port reads (Node's default, stated so the internal bound below stays above it). */
export const PUBLIC_MAX_HEADER_BYTES = 16 * 1024;
/**
 * An internal port reads what the edge accepted plus what the edge adds: the signed identity token, which
 * repeats the path (base64url, 4/3 of its length), and the trace headers. 64 KiB holds that for any request
 * within the public bound, so a service never refuses with a 431 what the client sent within bounds.
 */
export const INTERNAL_MAX_HEADER_BYTES = 64 * 1024;

export function listen(app: express.Express, port: number, host = '127.0.0.1', maxHeaderBytes = PUBLIC_MAX_HEADER_BYTES): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer({ maxHeaderSize: maxHeaderBytes }, app);
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
    answerParserErrors(server);
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
  });
}

/**
 * Stops accepting connections and waits (bounded) for in-flight requests to finish. A keep-alive connection
 * whose request finishes meanwhile is closed once idle, so the wait ends with the last request, not the grace.
 * A request that still arrives on a kept-alive connection is refused (503 in the envelope, `Connection:
 * close`): Node would otherwise serve it, so a busy client kept the drain going until the grace cut what
 * was then in flight.
 */
export function closeServer(server: Server, graceMs = 10_000): Promise<void> {
  server.removeAllListeners('request');
  server.on('request', refuseWhileDraining);
  return new Promise((resolve) => {
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => { clearInterval(idle); server.closeAllConnections(); resolve(); }, graceMs);
    force.unref();
    server.close(() => { clearTimeout(force); clearInterval(idle); resolve(); });
    server.closeIdleConnections();
  });
}

function refuseWhileDraining(_req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify(errorEnvelope(new UnavailableError('The service is shutting down', 'shutting_down'), newTraceId()));
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}
