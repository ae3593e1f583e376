import express, { type NextFunction, type Request, type Response } from 'express';
import type { Server } from 'node:http';
import { AuthenticationError, errorEnvelope, GatewayError, InputError, NotFoundError, PayloadTooLargeError, toGatewayError } from './errors';
import type { Health } from './health';
import { newTraceId } from './ids';
import { H_TRACE_ID, type Identity } from './identity';
import { IDENTITY_HEADER, type IdentityVerifier } from './identity-token';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      traceId: string;
      /** The verified identity of the caller; null on an anonymous route (and before verification). */
      identity: Identity | null;
    }
  }
}

export interface HttpAppOptions {
  logger: Logger;
  health: Health;
  metrics?: Metrics;
  /** JSON body limit in bytes. */
  bodyLimitBytes: number;
  /**
   * Verifies the signed identity of every request except the probes and /metrics. Every service passes one;
   * only tests of the shell itself leave it out.
   */
  identity?: IdentityVerifier;
}

/**
 * The common express shell of every service: trace id, JSON body with a size limit, probes, metrics and
 * the one error handler that renders the spec's envelope. Routers are mounted between `app` creation and
 * `finish(app)`.
 */
export function createHttpApp(opts: HttpAppOptions) {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const fromEdge = req.headers[H_TRACE_ID];
    req.traceId = typeof fromEdge === 'string' && fromEdge ? fromEdge : newTraceId();
    req.identity = null;
    res.setHeader('x-trace-id', req.traceId);
    next();
  });
  if (opts.metrics) app.use(opts.metrics.httpMiddleware());
  app.get('/livez', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    const report = await opts.health.report();
    res.status(report.ready ? 200 : 503).json(report);
  });
  if (opts.metrics) {
    const metrics = opts.metrics;
    app.get('/metrics', async (_req, res) => {
      res.setHeader('content-type', metrics.registry.contentType);
      res.send(await metrics.registry.metrics());
    });
  }
  if (opts.identity) app.use(verifyIdentity(opts.identity));
  app.use(express.json({ limit: opts.bodyLimitBytes, type: ['application/json', 'application/*+json'] }));
  return app;
}

/** Believes only a token bound to this request (method and path with query, as the edge forwarded them). */
function verifyIdentity(verifier: IdentityVerifier): express.RequestHandler {
  return (req, res, next) => {
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

/** Mounts the envelope renderers last: unknown routes and every thrown error. */
export function finishHttpApp(app: express.Express, logger: Logger): void {
  app.use((req: Request) => {
    throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = fromExpressError(err);
    if (e.status >= 500) logger.error({ err, traceId: req.traceId, path: req.path }, 'request failed');
    sendError(res, e, req.traceId);
  });
}

export function sendError(res: Response, err: unknown, traceId: string): void {
  const e = toGatewayError(err);
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
  res.status(e.status).json(errorEnvelope(e, traceId));
}

/** body-parser failures arrive as plain errors with a `type`; they are the caller's fault, not ours. */
function fromExpressError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const bp = err as { type?: string; status?: number };
  if (bp?.type === 'entity.too.large') return new PayloadTooLargeError();
  if (bp?.type === 'entity.parse.failed') return new InputError('Request body is not valid JSON', null, 'invalid_json');
  if (bp?.type && bp.status === 400) return new InputError('Malformed request body');
  return toGatewayError(err);
}

export function listen(app: express.Express, port: number, host = '127.0.0.1'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(server)));
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
  });
}

/** Stops accepting connections and waits (bounded) for in-flight requests to finish. */
export function closeServer(server: Server, graceMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => { server.closeAllConnections(); resolve(); }, graceMs);
    force.unref();
    server.close(() => { clearTimeout(force); resolve(); });
    server.closeIdleConnections();
  });
}
