import * as grpc from '@grpc/grpc-js';
import express from 'express';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Bus } from '@gw/bus';
import { accessLog, closeServer, grpcClientOptions, Health, listen, Metrics, newTraceId, NotFoundError, sendError, type Logger, type RunningService } from '@gw/platform';
import { keysProto, TOPICS, type KeyChanged } from '@gw/proto';
import { Authenticator, extractSecret } from './auth/authenticator';
import type { EdgeConfig } from './config';
import { checkDeclaredBodySize, forwardTo, rewriteHeaders } from './proxy/forwarding';
import { matchRoute, type Upstream } from './proxy/route-table';

export interface EdgeDeps {
  config: EdgeConfig;
  bus: Bus;
  logger: Logger;
}

export interface RunningEdge extends RunningService {
  adminPort: number;
}

export async function startEdge({ config, bus, logger }: EdgeDeps): Promise<RunningEdge> {
  const keys = new keysProto.gateway.keys.v1.KeysService(config.KEYS_GRPC_ADDR, grpc.credentials.createInsecure(), grpcClientOptions);
  const auth = new Authenticator(keys, config.AUTH_CACHE_TTL_MS);
  // Each edge instance drops its own cache entries, so each is its own consumer group.
  const keyEvents = await bus.subscribe<KeyChanged>({
    topics: [TOPICS.keys],
    group: `edge-keys-${randomUUID()}`,
    from: 'latest',
    handleBatch: async (messages) => { for (const m of messages) auth.invalidate(m.value.key_hash); },
  });

  const upstreams: Record<Upstream, express.RequestHandler> = {
    inference: forwardTo(config.INFERENCE_HTTP_URL, config.BODY_LIMIT_BYTES, logger),
    keys: forwardTo(config.KEYS_HTTP_URL, config.BODY_LIMIT_BYTES, logger),
    billing: forwardTo(config.BILLING_HTTP_URL, config.BODY_LIMIT_BYTES, logger),
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
      rewriteHeaders(req, identity, traceId);
      upstreams[route.upstream](req, res, (err?: unknown) => sendError(res, err ?? new NotFoundError('Not found'), traceId));
    } catch (err) {
      sendError(res, err, traceId);
    }
  });
  const server = await listen(app, config.EDGE_PORT);

  const health = new Health()
    .addCheck('bus', () => bus.ping())
    .addCheck('keys', () => grpcReachable(keys));
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
  const adminServer: Server = await listen(admin, config.EDGE_ADMIN_PORT);

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
    },
  };
}

/** Ready only when the keys service's channel can connect (authentication depends on it). */
function grpcReachable(client: grpc.Client): Promise<boolean> {
  return new Promise((resolve) => {
    client.waitForReady(Date.now() + 1000, (err) => resolve(!err));
  });
}
