import * as grpc from '@grpc/grpc-js';
import cors from 'cors';
import type express from 'express';
import { randomUUID } from 'node:crypto';
import { subscribeInBackground, type TypedBus } from '@gw/bus';
import {
  grpcClientOptions, grpcServingCheck, IdentitySigner, NotFoundError, OverloadedError, PayloadTooLargeError, startService, type InProcessHandler, type Logger, type RunningService,
} from '@gw/platform';
import { keysProto, TOPICS, type TopicMessages } from '@gw/proto';
import type { Store } from '@gw/store';
import { Authenticator, extractSecret } from './auth/authenticator';
import type { EdgeConfig } from './config';
import { BodyBudget, bodyBytesOf } from './limits/body-budget';
import { openEdgeRateLimits } from './limits/edge-rate-limits';
import { serveOpenApi } from './openapi-route';
import { forwardTo, rewriteHeaders } from './proxy/forwarding';
import { matchRoute, type Upstream } from './proxy/route-table';

export interface EdgeDeps {
  config: EdgeConfig;
  bus: TypedBus<TopicMessages>;
  logger: Logger;
  /** The distributed engine's store: rate-limit counters shared by every edge instance. Without it they are this process's. */
  store?: Store;
  /**
   * Services running in this same process (the single-machine mode): requests for them are handed to their
   * own app with the identity handed over as an object, instead of crossing loopback HTTP with a token.
   */
  inProcess?: Partial<Record<Upstream, InProcessHandler>>;
}

const RATE_LIMIT_HEADERS = ['requests', 'tokens'].flatMap((k) => ['limit', 'remaining', 'reset'].map((f) => `x-ratelimit-${f}-${k}`));

export interface RunningEdge extends RunningService {
  adminPort: number;
}

/** The only public port: the edge answers no probes or /metrics there; they listen on its admin port. */
export async function startEdge({ config, bus, store, logger, inProcess = {} }: EdgeDeps): Promise<RunningEdge> {
  return startService({
    name: 'edge', logger, host: config.EDGE_HOST, httpPort: config.EDGE_PORT,
    admin: { port: config.EDGE_ADMIN_PORT, host: config.BIND_HOST }, accessLog: config.ACCESS_LOG,
  }, async ({ health, metrics, background, client }) => {
    const keys = client('keys', new keysProto.gateway.keys.v1.KeysService(config.KEYS_GRPC_ADDR, grpc.credentials.createInsecure(), grpcClientOptions));
    const auth = new Authenticator(keys, {
      ttlMs: config.AUTH_CACHE_TTL_MS, staleWindowMs: config.AUTH_STALE_WINDOW_MS,
      negativeTtlMs: config.AUTH_NEGATIVE_CACHE_TTL_MS, negativeMaxEntries: config.AUTH_NEGATIVE_CACHE_MAX,
      onLookup: (outcome) => metrics.edge.keyLookups.inc({ outcome }),
    });
    const limits = openEdgeRateLimits({
      key: { requestsPerMinute: config.RATE_LIMIT_KEY_RPM, tokensPerMinute: config.RATE_LIMIT_KEY_TPM },
      account: { requestsPerMinute: config.RATE_LIMIT_ACCOUNT_RPM, tokensPerMinute: config.RATE_LIMIT_ACCOUNT_TPM },
    }, { bus, store, logger, metrics });
    background('rate-limit-sweeper', limits.sweeper);
    const limitUsage = background('rate-limit-usage', limits.usage);
    const signer = new IdentitySigner(config.GATEWAY_IDENTITY_SECRET, 'edge');
    // Each edge instance drops its own cache entries, so each is its own consumer group. Joined in the
    // background: until then cached keys expire by their TTL only.
    const keyEvents = background('key-events', subscribeInBackground(bus, {
      topics: [TOPICS.keys],
      group: `edge-keys-${randomUUID()}`,
      from: 'latest',
      ephemeral: true,
      // A message without a key hash is skipped: thrown on, its batch would be redelivered forever.
      handleBatch: async (messages) => {
        for (const m of messages) {
          const keyHash = (m.value as { key_hash?: unknown } | null)?.key_hash;
          if (typeof keyHash === 'string') auth.invalidate(keyHash);
        }
      },
    }, logger));

    const upstream = (name: Upstream, url: string, bodyLimit = config.BODY_LIMIT_BYTES): express.RequestHandler | null =>
      inProcess[name] ? null : forwardTo(url, bodyLimit, logger, config.UPSTREAM_IDLE_TIMEOUT_MS);
    const remote: Record<Upstream, express.RequestHandler | null> = {
      inference: upstream('inference', config.INFERENCE_HTTP_URL),
      keys: upstream('keys', config.KEYS_HTTP_URL),
      billing: upstream('billing', config.BILLING_HTTP_URL),
      batch: upstream('batch', config.BATCH_HTTP_URL, config.UPLOAD_BODY_LIMIT_BYTES),
      webhooks: upstream('webhooks', config.WEBHOOKS_HTTP_URL),
      console: upstream('console', config.CONSOLE_HTTP_URL),
      media: upstream('media', config.MEDIA_HTTP_URL, config.MEDIA_BODY_LIMIT_BYTES),
    };
    const bodies = new BodyBudget(config.BODY_MEMORY_BUDGET_BYTES);
    metrics.watchBodyBudget(() => bodies.held);
    const bodyLimitOf = (name: Upstream) =>
      name === 'batch' ? config.UPLOAD_BODY_LIMIT_BYTES : name === 'media' ? config.MEDIA_BODY_LIMIT_BYTES : config.BODY_LIMIT_BYTES;

    // The edge cannot authenticate anyone new unless the keys service can answer (its store is up).
    const keysServing = client('keys-health', grpcServingCheck(keys));
    health
      .addCheck('keys', keysServing.check)
      .addCheck('bus', () => bus.ping(), 'degraded')
      .addCheck('key-events', async () => keyEvents.joined(), 'degraded');
    // Until it joins, calls' tokens are not counted against the token budgets.
    health.addCheck('rate-limit-usage', async () => limitUsage.joined(), 'degraded');
    // The shared rate counters (distributed mode): while away, requests are admitted unlimited.
    if (store) health.addCheck('rate-limit-store', () => store.ping(), 'degraded');

    const forward: express.RequestHandler = async (req, res, next) => {
      const traceId = req.traceId;
      try {
        const route = matchRoute(req.path);
        if (!route) throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
        const bodyLimit = bodyLimitOf(route.upstream);
        const bodyBytes = bodyBytesOf(req.headers, bodyLimit);
        if (bodyBytes > bodyLimit) throw new PayloadTooLargeError(`Request body exceeds ${bodyLimit} bytes`);
        const key = route.auth === 'required'
          ? await auth.authenticateKey(extractSecret(req.headers, route.allowXApiKey), traceId)
          : null;
        const identity = key?.identity ?? null;
        // Tokens are spent by calls to the model routes (POST) only: reading a job or a batch stays possible
        // once they are used up. Every authenticated request counts against the requests per minute.
        const spendsTokens = req.method === 'POST' && (route.upstream === 'inference' || route.upstream === 'batch');
        if (key) await limits.enforce(res, key.identity, spendsTokens, key.rateLimits);
        // File uploads stream to the blob store; every other service reads its body whole.
        if (route.upstream !== 'batch' && !bodies.holdUntilClosed(bodyBytes, identity?.accountId ?? '', res)) {
          metrics.edge.bodyBudgetRefusals.inc();
          // Its body is never read: the connection cannot be reused.
          res.setHeader('connection', 'close');
          throw new OverloadedError('The gateway holds as many request bodies as it may at once; retry shortly', 1);
        }
        const done = (err?: unknown) => next(err ?? new NotFoundError('Not found'));
        const local = inProcess[route.upstream];
        if (local) {
          rewriteHeaders(req, null, traceId);
          local(req, res, done, { identity, traceId });
          return;
        }
        // Bound to the path with query exactly as the proxy forwards it (req.url is not rewritten).
        rewriteHeaders(req, signer.mint({ method: req.method, path: req.url }, identity, traceId), traceId);
        remote[route.upstream]!(req, res, done);
      } catch (err) {
        next(err);
      }
    };
    // Preflights are answered here, never forwarded. No credentials: keys travel in the Authorization header.
    const corsPolicy = config.CORS_ALLOWED_ORIGINS.length === 0 ? [] : [cors({
      origin: config.CORS_ALLOWED_ORIGINS.includes('*') ? '*' : config.CORS_ALLOWED_ORIGINS,
      credentials: false,
      maxAge: 600,
      exposedHeaders: ['x-request-id', 'retry-after', ...RATE_LIMIT_HEADERS],
    }) as express.RequestHandler];
    return { routes: [serveOpenApi, ...corsPolicy, forward] };
  });
}
