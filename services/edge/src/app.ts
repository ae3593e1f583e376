import * as grpc from '@grpc/grpc-js';
import type express from 'express';
import { randomUUID } from 'node:crypto';
import { subscribeInBackground, type TypedBus } from '@gw/bus';
import {
  grpcClientOptions, grpcServingCheck, IdentitySigner, NotFoundError, startService, type HttpHandler, type Logger, type RunningService,
} from '@gw/platform';
import { keysProto, TOPICS, type TopicMessages } from '@gw/proto';
import { Authenticator, extractSecret } from './auth/authenticator';
import type { EdgeConfig } from './config';
import { serveOpenApi } from './openapi-route';
import { checkDeclaredBodySize, forwardTo, handOver, rewriteHeaders } from './proxy/forwarding';
import { matchRoute, type Upstream } from './proxy/route-table';

export interface EdgeDeps {
  config: EdgeConfig;
  bus: TypedBus<TopicMessages>;
  logger: Logger;
  /**
   * Services running in this same process (the single-machine mode): requests for them are handed to their
   * own app, with the same identity token and headers, instead of crossing loopback HTTP.
   */
  inProcess?: Partial<Record<Upstream, HttpHandler>>;
}

export interface RunningEdge extends RunningService {
  adminPort: number;
}

/** The only public port: the edge answers no probes or /metrics there; they listen on its admin port. */
export async function startEdge({ config, bus, logger, inProcess = {} }: EdgeDeps): Promise<RunningEdge> {
  return startService({
    name: 'edge', logger, host: config.EDGE_HOST, httpPort: config.EDGE_PORT,
    admin: { port: config.EDGE_ADMIN_PORT, host: config.BIND_HOST }, accessLog: config.ACCESS_LOG,
  }, async ({ health, background, client }) => {
    const keys = client('keys', new keysProto.gateway.keys.v1.KeysService(config.KEYS_GRPC_ADDR, grpc.credentials.createInsecure(), grpcClientOptions));
    const auth = new Authenticator(keys, { ttlMs: config.AUTH_CACHE_TTL_MS, staleWindowMs: config.AUTH_STALE_WINDOW_MS });
    const signer = new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'edge');
    // Each edge instance drops its own cache entries, so each is its own consumer group. Joined in the
    // background: until then cached keys expire by their TTL only.
    const keyEvents = background('key-events', subscribeInBackground(bus, {
      topics: [TOPICS.keys],
      group: `edge-keys-${randomUUID()}`,
      from: 'latest',
      handleBatch: async (messages) => { for (const m of messages) auth.invalidate(m.value.key_hash); },
    }, logger));

    const upstream = (name: Upstream, url: string, bodyLimit = config.BODY_LIMIT_BYTES): express.RequestHandler => {
      const local = inProcess[name];
      return local ? handOver(local) : forwardTo(url, bodyLimit, logger, config.UPSTREAM_IDLE_TIMEOUT_MS);
    };
    const upstreams: Record<Upstream, express.RequestHandler> = {
      inference: upstream('inference', config.INFERENCE_HTTP_URL),
      keys: upstream('keys', config.KEYS_HTTP_URL),
      billing: upstream('billing', config.BILLING_HTTP_URL),
      batch: upstream('batch', config.BATCH_HTTP_URL, config.UPLOAD_BODY_LIMIT_BYTES),
      webhooks: upstream('webhooks', config.WEBHOOKS_HTTP_URL),
    };

    // The edge cannot authenticate anyone new unless the keys service can answer (its store is up).
    const keysServing = client('keys-health', grpcServingCheck(config.KEYS_GRPC_ADDR));
    health
      .addCheck('keys', keysServing.check)
      .addCheck('bus', () => bus.ping(), 'degraded')
      .addCheck('key-events', async () => keyEvents.joined(), 'degraded');

    const forward: express.RequestHandler = async (req, res, next) => {
      const traceId = req.traceId;
      try {
        const route = matchRoute(req.path);
        if (!route) throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
        checkDeclaredBodySize(req, route.upstream === 'batch' ? config.UPLOAD_BODY_LIMIT_BYTES : config.BODY_LIMIT_BYTES);
        const identity = route.auth === 'required'
          ? await auth.authenticate(extractSecret(req.headers, route.allowXApiKey), traceId)
          : null;
        // Bound to the path with query exactly as the proxy forwards it (req.url is not rewritten).
        rewriteHeaders(req, signer.mint({ method: req.method, path: req.url }, identity, traceId), traceId);
        upstreams[route.upstream](req, res, (err?: unknown) => next(err ?? new NotFoundError('Not found')));
      } catch (err) {
        next(err);
      }
    };
    return { routes: [serveOpenApi, forward] };
  });
}
