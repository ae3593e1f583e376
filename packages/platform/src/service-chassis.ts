import * as grpc from '@grpc/grpc-js';
import express, { type RequestHandler } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGrpcServer, type GrpcServerHandle } from './grpc';
import { GrpcCallAuthenticator, type ApiKeyAccounts } from './grpc-auth';
import { reflectionFor } from './grpc-reflection';
import { healthProto } from '@gw/proto';
import { Health } from './health';
import { closeServer, createHttpApp, finishHttpApp, INTERNAL_MAX_HEADER_BYTES, listen, mountProbes, PUBLIC_MAX_HEADER_BYTES } from './http';
import { HandedIdentities } from './handed-identity';
import { IdentityVerifier } from './identity-token';
import type { Logger } from './logger';
import { Metrics } from './metrics';
import type { HttpHandler, RunningService } from './service';

/** What a service declares about itself; everything else (shell, probes, metrics, errors, stop order) is the chassis's. */
export interface ServiceSpec {
  name: string;
  logger: Logger;
  /** Interface the service port (and the gRPC port) bind to. */
  host: string;
  httpPort: number;
  /** Only for a service that serves gRPC: where its server listens. */
  grpcPort?: number;
  /**
   * The edge: its public port carries only the API, probes and /metrics listen here instead, and the public
   * port believes no trace id or identity from its clients (it mints them) and leaves bodies unread.
   */
  admin?: { port: number; host: string };
  /**
   * The platform secret. One verifier (one replay memory) checks the signed identity of every HTTP request
   * and gRPC call of the service. Required unless the service is the edge (`admin` set).
   */
  identitySecret?: string;
  /** JSON body limit in bytes; required unless the service is the edge, whose public port leaves bodies unread. */
  bodyLimitBytes?: number;
  /** One info line per request (`ACCESS_LOG`). */
  accessLog?: boolean;
  /** Paths (and everything under them) whose errors answer plain JSON instead of the spec's envelope. */
  plainJsonErrorPaths?: string[];
  /** Bound on finishing in-flight HTTP requests and gRPC calls when stopping. */
  graceMs?: number;
}

/** A gRPC service the chassis serves next to grpc.health.v1 (answered from the service's Health) and server reflection. */
export interface GrpcServiceDeclaration {
  definition: grpc.ServiceDefinition;
  handlers: grpc.UntypedServiceImplementation;
}

/** What a service mounts once its domain is wired. */
export interface ServiceSurfaces {
  /** Routers mounted in order between the shell (trace id, identity, body) and the error renderer. */
  routes: RequestHandler[];
  grpc?: GrpcServiceDeclaration[];
}

/** Something that runs in the background until stopped: a consumer, a sweeper, a worker pool. */
export interface BackgroundTask {
  stop(): Promise<void>;
}

/** Holds what it accepted until closed: a publisher, an outbox. */
export interface Flushable {
  close(): Promise<void>;
}

/** A connection to another service or an upstream. */
export interface ClientHandle {
  close(): void | Promise<void>;
}

/** Handed to a service's wiring: the shared pieces, and where it registers what must be stopped. */
export interface ServiceScope {
  readonly logger: Logger;
  readonly health: Health;
  readonly metrics: Metrics;
  /** The authenticator of gRPC calls, on the service's one verifier; `apiKeys` also admits API-key callers. */
  grpcAuthenticator(apiKeys?: ApiKeyAccounts): GrpcCallAuthenticator;
  /** Stopped after the ports closed, in reverse registration order. */
  background<T extends BackgroundTask>(name: string, task: T): T;
  /** Closed (flushed) after the background work stopped, in reverse registration order. */
  publisher<T extends Flushable>(name: string, publisher: T): T;
  /** Closed last, in reverse registration order. */
  client<T extends ClientHandle>(name: string, client: T): T;
}

export interface StartedService extends RunningService {
  /** The port of probes and /metrics when they have their own (`admin`); 0 otherwise. */
  adminPort: number;
}

interface Registered { name: string; run: () => void | Promise<void> }

/**
 * The one way a service is built, started and stopped. `wire` sets up the domain (registering its
 * background work, publishers and clients as it opens them) and returns what to mount. Then the chassis
 * builds the HTTP app (probes, /metrics, identity check, the one error renderer), the gRPC server (with
 * grpc.health.v1 from the same Health, and server reflection of what it serves) and listens.
 *
 * `stop()` runs one order: mark draining (not ready) → stop accepting HTTP and gRPC and let in-flight
 * requests finish (bounded by `graceMs`; an admin port closes after, so probes report draining meanwhile) →
 * stop the background work → close publishers (their buffers flush) → close clients; each group in reverse
 * registration order. A service that fails to start closes whatever it had opened, in the same order.
 */
export async function startService(spec: ServiceSpec, wire: (scope: ServiceScope) => Promise<ServiceSurfaces>): Promise<StartedService> {
  const { logger } = spec;
  const metrics = new Metrics(spec.name);
  const health = new Health({ logger, metrics });
  const verifier = spec.identitySecret === undefined ? null : new IdentityVerifier(spec.identitySecret);
  if (!spec.admin && (!verifier || spec.bodyLimitBytes === undefined)) throw new Error(`${spec.name}: an internal service needs the identity secret and a body limit`);
  const background: Registered[] = [];
  const publishers: Registered[] = [];
  const clients: Registered[] = [];
  // The ports close with the grace given to closeAll: none when a start failed.
  const servers: { name: string; close: (graceMs: number) => Promise<void> }[] = [];
  const admins: Registered[] = [];

  const scope: ServiceScope = {
    logger, health, metrics,
    grpcAuthenticator: (apiKeys) => {
      if (!verifier) throw new Error(`${spec.name}: gRPC callers are authenticated with the identity secret`);
      return new GrpcCallAuthenticator(verifier, apiKeys ?? null);
    },
    background: (name, task) => { background.push({ name, run: () => task.stop() }); return task; },
    publisher: (name, p) => { publishers.push({ name, run: () => p.close() }); return p; },
    client: (name, c) => { clients.push({ name, run: () => c.close() }); return c; },
  };

  const closeAll = async (graceMs: number) => {
    await Promise.all(servers.map((s) => runStep(logger, { name: s.name, run: () => s.close(graceMs) })));
    await runInOrder(logger, admins);
    await runInOrder(logger, background.toReversed());
    await runInOrder(logger, publishers.toReversed());
    await runInOrder(logger, clients.toReversed());
  };

  const graceMs = spec.graceMs ?? 10_000;
  let httpPort = 0;
  let grpcPort = 0;
  let adminPort = 0;
  let httpHandler: HttpHandler | null = null;
  const handedIdentities = new HandedIdentities();
  try {
    const surfaces = await wire(scope);
    const app = createHttpApp({
      logger, health, metrics, accessLog: spec.accessLog, name: spec.name,
      exposure: spec.admin ? 'public' : 'internal',
      bodyLimitBytes: spec.bodyLimitBytes ?? null,
      identity: verifier ?? undefined, handedIdentities,
    });
    for (const route of surfaces.routes) app.use(route);
    finishHttpApp(app, logger, { plainJsonErrorPaths: spec.plainJsonErrorPaths });
    httpHandler = app as unknown as HttpHandler;

    if (surfaces.grpc?.length) {
      if (spec.grpcPort === undefined) throw new Error(`${spec.name}: gRPC services need a gRPC port`);
      const grpcServer: GrpcServerHandle = await startGrpcServer(`${spec.host}:${spec.grpcPort}`, (server) => {
        for (const s of surfaces.grpc ?? []) server.addService(s.definition, s.handlers);
        health.register(server);
        reflectionFor([...(surfaces.grpc ?? []).map((s) => s.definition), healthProto.grpc.health.v1.Health.service]).addToServer(server);
      });
      servers.push({ name: 'grpc', close: (grace) => grpcServer.shutdown(grace) });
      grpcPort = grpcServer.port;
    }
    const http: Server = await listen(app, spec.httpPort, spec.host, spec.admin ? PUBLIC_MAX_HEADER_BYTES : INTERNAL_MAX_HEADER_BYTES);
    servers.push({ name: 'http', close: (grace) => closeServer(http, grace) });
    httpPort = (http.address() as AddressInfo).port;

    if (spec.admin) {
      const admin = express();
      admin.disable('x-powered-by');
      mountProbes(admin, health, metrics);
      const adminServer = await listen(admin, spec.admin.port, spec.admin.host);
      admins.push({ name: 'admin', run: () => closeServer(adminServer, 1000) });
      adminPort = (adminServer.address() as AddressInfo).port;
    }
  } catch (err) {
    // Half started: nothing may keep a port, a consumer or a channel open in a process about to fail.
    await closeAll(0);
    throw err;
  }
  logger.info({ httpPort, grpcPort: grpcPort || undefined, adminPort: adminPort || undefined }, `${spec.name} service started`);

  let stopping: Promise<void> | null = null;
  return {
    name: spec.name, httpPort, grpcPort, adminPort, health, httpHandler: httpHandler!,
    handIn: (req, res, next, handed) => {
      handedIdentities.handIn(req, handed);
      httpHandler!(req, res, next);
    },
    stop: () => {
      stopping ??= (async () => {
        health.startDraining();
        await closeAll(graceMs);
        logger.info(`${spec.name} service stopped`);
      })();
      return stopping;
    },
  };
}

/** A failing step is logged and the order goes on: every later step still releases what it holds. */
async function runStep(logger: Logger, step: Registered): Promise<void> {
  try {
    await step.run();
  } catch (err) {
    logger.error({ err, step: step.name }, 'stop step failed');
  }
}

async function runInOrder(logger: Logger, steps: Registered[]): Promise<void> {
  for (const step of steps) await runStep(logger, step);
}
