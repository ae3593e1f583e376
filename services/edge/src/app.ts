import * as grpc from '@grpc/grpc-js';
import express from 'express';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { subscribeInBackground, type TypedBus } from '@gw/bus';
import {
  accessLog, closeServer, grpcClientOptions, grpcServingCheck, Health, IdentitySigner, listen, Metrics, newTraceId, NotFoundError, sendError, type Logger, type RunningService,
} from '@gw/platform';
import { keysProto, TOPICS, type TopicMessages } from '@gw/proto';
import { Authenticator, extractSecret } from './auth/authenticator';
import type { EdgeConfig } from './config';
import { checkDeclaredBodySize, forwardTo, rewriteHeaders } from './proxy/forwarding';
import { matchRoute, type Upstream } from './proxy/route-table';

export interface EdgeDeps {
  config: EdgeConfig;
  bus: TypedBus<TopicMessages>;
  logger: Logger;
}

export interface RunningEdge extends RunningService {
  adminPort: number;
}

export async function startEdge({ config, bus, logger }: EdgeDeps): Promise<RunningEdge> {
  const keys = new keysProto.gateway.keys.v1.KeysService(config.KEYS_GRPC_ADDR, grpc.credentials.createInsecure(), grpcClientOptions);
  const auth = new Authenticator(keys, { ttlMs: config.AUTH_CACHE_TTL_MS, staleWindowMs: config.AUTH_STALE_WINDOW_MS });
  const signer = new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'edge');
  // Each edge instance drops its own cache entries, so each is its own consumer group. Joined in the
  // background: until then cached keys expire by their TTL only.
  const keyEvents = subscribeInBackground(bus, {
    topics: [TOPICS.keys],
    group: `edge-keys-${randomUUID()}`,
    from: 'latest',
    handleBatch: async (messages) => { for (const m of messages) auth.invalidate(m.value.key_hash); },
  }, logger);

  const upstreams: Record<Upstream, express.RequestHandler> = {
    inference: forwardTo(config.INFERENCE_HTTP_URL, config.BODY_LIMIT_BYTES, logger, config.UPSTREAM_IDLE_TIMEOUT_MS),
    keys: forwardTo(config.KEYS_HTTP_URL, config.BODY_LIMIT_BYTES, logger, config.UPSTREAM_IDLE_TIMEOUT_MS),
    billing: forwardTo(config.BILLING_HTTP_URL, config.BODY_LIMIT_BYTES, logger, config.UPSTREAM_IDLE_TIMEOUT_MS),
  };

  const metrics = new Metrics('edge');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(metrics.httpMiddleware());
  if (config.ACCESS_LOG) app.use(accessLog(logger, (_req, res) => String(res.getHeader('x-trace-id') ?? '')));
  app.use(async (req, res) => {
    const traceId = newTraceId();
    res.setHeader('x-trace-id', traceId);
    try {
      const route = matchRoute(req.path);
      if (!route) throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
      checkDeclaredBodySize(req, config.BODY_LIMIT_BYTES);
      const identity = route.auth === 'required'
        ? await auth.authenticate(extractSecret(req.headers, route.allowXApiKey), traceId)
        : null;
      // Bound to the path with query exactly as the proxy forwards it (req.url is not rewritten).
      rewriteHeaders(req, signer.mint({ method: req.method, path: req.url }, identity, traceId), traceId);
      upstreams[route.upstream](req, res, (err?: unknown) => sendError(res, err ?? new NotFoundError('Not found'), traceId));
    } catch (err) {
      sendError(res, err, traceId);
    }
  });
  const server = await listen(app, config.EDGE_PORT, config.EDGE_HOST);

  // The edge cannot authenticate anyone new unless the keys service can answer (its store is up).
  const keysServing = grpcServingCheck(config.KEYS_GRPC_ADDR);
  const health = new Health({ logger, metrics })
    .addCheck('keys', keysServing.check)
    .addCheck('bus', () => bus.ping(), 'degraded')
    .addCheck('key-events', async () => keyEvents.joined(), 'degraded');
  const admin = express();
  admin.get('/livez', (_req, res) => { res.json({ status: 'ok' }); });
  admin.get('/readyz', async (_req, res) => {
    const report = await health.report();
    res.status(report.ready ? 200 : 503).json(report);
  });
  admin.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  const adminServer: Server = await listen(admin, config.EDGE_ADMIN_PORT, config.BIND_HOST);

  return {
    name: 'edge',
    httpPort: (server.address() as { port: number }).port,
    adminPort: (adminServer.address() as { port: number }).port,
    grpcPort: 0,
    health,
    stop: async () => {
      health.startDraining();
      await closeServer(server);
      await closeServer(adminServer, 1000);
      await keyEvents.stop();
      keys.close();
      keysServing.close();
    },
  };
}
