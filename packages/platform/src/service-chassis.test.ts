import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Router } from 'express';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import * as path from 'node:path';
import { healthProto, keysProto } from '@gw/proto';
import { InputError } from './errors';
import { callUnary, grpcClientOptions } from './grpc';
import { authenticatedUnaryHandler, serviceIdentityInterceptor } from './grpc-auth';
import { Health } from './health';
import { closeServer, createHttpApp, finishHttpApp, listen, requireIdentity } from './http';
import type { Identity } from './identity';
import { IDENTITY_HEADER, IdentitySigner } from './identity-token';
import { createLogger } from './logger';
import { startService, type ServiceScope, type ServiceSpec, type ServiceSurfaces, type StartedService } from './service-chassis';

const SECRET = 'service-chassis-test-secret-0123456789abcdef';
const ID: Identity = { accountId: 'acct_1', keyHash: 'ab'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
const edge = new IdentitySigner(SECRET, 'edge');
const logger = createLogger('chassis-test', 'silent');
const spec = (over: Partial<ServiceSpec> = {}): ServiceSpec => ({
  name: 'chassis-test', logger, host: '127.0.0.1', httpPort: 0, identitySecret: SECRET, bodyLimitBytes: 1024, ...over,
});

/** A router with a keyed route, a route failing with a typed error, and the same under a plain-JSON path. */
function domainRoutes(): Router {
  const router = Router();
  router.get('/v1/me', (req, res) => { res.json({ accountId: requireIdentity(req).accountId }); });
  router.post('/v1/things', () => { throw new InputError('name is required', 'name'); });
  router.post('/v1/plain/things', () => { throw new InputError('name is required', 'name'); });
  router.get('/v1/things/:thingId', (req, res) => {
    res.json({ thingId: req.params.thingId, query: req.query });
  });
  return router;
}

const signed = (method: string, path: string, identity: Identity | null = ID) => ({ [IDENTITY_HEADER]: edge.mint({ method, path }, identity, 'trace-1') });

describe('startService: an internal service', () => {
  let svc: StartedService;
  let base: string;
  let storeUp = true;

  beforeAll(async () => {
    svc = await startService(spec({ plainJsonErrorPaths: ['/v1/plain'] }), async ({ health }) => {
      health.addCheck('store', async () => storeUp).addCheck('bus', async () => false, 'degraded');
      return { routes: [domainRoutes()] };
    });
    base = `http://127.0.0.1:${svc.httpPort}`;
  });
  afterAll(() => svc.stop());

  it('serves probes and /metrics on its own port, with the readiness of its declared checks', async () => {
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: { store: true, bus: false }, degraded: ['bus'] });
    storeUp = false;
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    storeUp = true;
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('gw_dependency_up{dependency="bus",kind="degraded",service="chassis-test"} 0');
    expect(metrics).toContain('gw_http_requests_total');
  });

  it('believes only a signed identity bound to the request', async () => {
    expect(await (await fetch(`${base}/v1/me`, { headers: signed('GET', '/v1/me') })).json()).toEqual({ accountId: 'acct_1' });
    const refused = await fetch(`${base}/v1/me`, { headers: { 'x-gw-account-id': 'acct_1' } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: '401', error: { type: 'authentication_error' } });
    expect((await fetch(`${base}/v1/me`, { headers: signed('GET', '/v1/other') })).status).toBe(401);
  });

  it('believes an identity a caller in this process hands in with the request, for that request alone', async () => {
    // A front server of the test's: the `x-test-hand` header picks the hand-over (as the edge of the local stack
    // does), else the request goes to the app as over the network.
    const front = createHttpServer((req, res) => {
      const fail = () => res.destroy();
      const hand = req.headers['x-test-hand'];
      if (hand === undefined) svc.httpHandler(req, res, fail);
      else svc.handIn(req, res, fail, { identity: hand === 'anonymous' ? null : ID, traceId: 'trace-in-process' });
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const at = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    try {
      const handed = await fetch(`${at}/v1/me`, { headers: { 'x-test-hand': 'key' } });
      expect(handed.status).toBe(200);
      expect(handed.headers.get('x-trace-id')).toBe('trace-in-process');
      expect(await handed.json()).toEqual({ accountId: 'acct_1' });
      // The same connection (keep-alive), next request not handed in: a token is required again.
      expect((await fetch(`${at}/v1/me`)).status).toBe(401);
      expect((await fetch(`${at}/v1/me`, { headers: { 'x-test-hand': 'anonymous' } })).status).toBe(401);
      expect(await (await fetch(`${at}/v1/me`, { headers: signed('GET', '/v1/me') })).json()).toEqual({ accountId: 'acct_1' });
    } finally {
      await new Promise((resolve) => front.close(resolve));
    }
  });

  it('serves a request the edge\'s app set up and hands in: its routes, errors and parameters', async () => {
    // A front app of the platform's shell, as the edge of the local stack is.
    const front = createHttpApp({ logger, health: new Health({ logger }), bodyLimitBytes: null, exposure: 'public' });
    front.use((req, res, next) => svc.handIn(req, res, next, { identity: ID, traceId: req.traceId }));
    finishHttpApp(front, logger);
    const server = await listen(front, 0, '127.0.0.1');
    const at = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const thing = await fetch(`${at}/v1/things/t%201?a=1&a=2`);
      expect(thing.status).toBe(200);
      expect(await thing.json()).toEqual({ thingId: 't 1', query: { a: ['1', '2'] } });
      const refused = await fetch(`${at}/v1/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: { param: 'name', type: 'invalid_request_error' } });
      expect(await (await fetch(`${at}/v1/plain/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' })).json())
        .toEqual({ error: { code: 400, message: 'Request body is not valid JSON', param: null } });
      // The router fails to decode it before any route runs; the service's renderer still names the parameter.
      const undecodable = await fetch(`${at}/v1/things/%E0%A4%A`);
      expect(undecodable.status).toBe(400);
      expect(await undecodable.json()).toMatchObject({ error: { code: 'invalid_path_parameter', param: 'thingId' } });
      expect((await fetch(`${at}/v1/nowhere`)).status).toBe(404);
    } finally {
      await closeServer(server, 0);
    }
  });

  it('renders errors in the envelope, and in plain JSON under the paths the service names', async () => {
    const post = (path: string, body: string) => fetch(`${base}${path}`, { method: 'POST', headers: { ...signed('POST', path), 'content-type': 'application/json' }, body });
    const envelope = await post('/v1/things', '{}');
    expect(envelope.status).toBe(400);
    expect(await envelope.json()).toEqual({
      code: '400', traceId: 'trace-1',
      error: { message: 'name is required', type: 'invalid_request_error', param: 'name', code: 'invalid_request', traceId: 'trace-1' },
    });
    const plain = await post('/v1/plain/things', '{}');
    expect(plain.status).toBe(400);
    expect(await plain.json()).toEqual({ error: { code: 400, message: 'name is required', param: 'name' } });
    // The body parser's refusal is rendered by the same renderer, in the path's style.
    const badJson = await post('/v1/plain/things', '{not json');
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toEqual({ error: { code: 400, message: 'Request body is not valid JSON', param: null } });
    const unknown = await fetch(`${base}/v1/plain/nowhere`, { headers: signed('GET', '/v1/plain/nowhere') });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 404 } });
  });
});

describe('startService: the edge shape (admin port)', () => {
  let svc: StartedService;

  beforeAll(async () => {
    svc = await startService(spec({ identitySecret: undefined, bodyLimitBytes: undefined, admin: { port: 0, host: '127.0.0.1' } }), async ({ health }) => {
      health.addCheck('keys', async () => true);
      const router = Router();
      router.post('/v1/echo', (req, res) => { res.json({ traceId: req.traceId, parsed: req.body !== undefined }); });
      return { routes: [router] };
    });
  });
  afterAll(() => svc.stop());

  it('keeps probes and /metrics off the public port and serves them on the admin port', async () => {
    for (const path of ['/livez', '/readyz', '/metrics']) {
      expect((await fetch(`http://127.0.0.1:${svc.httpPort}${path}`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${svc.adminPort}${path}`)).status).toBe(200);
    }
  });

  it('believes no client trace id and leaves bodies unread for forwarding', async () => {
    const res = await fetch(`http://127.0.0.1:${svc.httpPort}/v1/echo`, {
      method: 'POST', headers: { 'x-trace-id': 'client-chosen', 'content-type': 'application/json' }, body: '{"a":1}',
    });
    const body = await res.json() as { traceId: string; parsed: boolean };
    expect(body.traceId).not.toBe('client-chosen');
    expect(res.headers.get('x-trace-id')).toBe(body.traceId);
    expect(body.parsed).toBe(false);
  });
});

describe('startService: gRPC', () => {
  it('serves the declared services behind the authenticated wrapper, and grpc.health.v1 from the same Health', async () => {
    let storeUp = true;
    const svc = await startService(spec({ grpcPort: 0 }), async (scope) => {
      scope.health.addCheck('store', async () => storeUp);
      const auth = scope.grpcAuthenticator();
      return {
        routes: [],
        grpc: [{
          definition: keysProto.gateway.keys.v1.KeysService.service,
          handlers: { Authenticate: authenticatedUnaryHandler(scope.logger, auth, async (req: { secret: string }) => ({ account_id: `for-${req.secret}` })) },
        }],
      };
    });
    const addr = `127.0.0.1:${svc.grpcPort}`;
    const anonymous = new keysProto.gateway.keys.v1.KeysService(addr, grpc.credentials.createInsecure(), grpcClientOptions);
    const signedClient = new keysProto.gateway.keys.v1.KeysService(addr, grpc.credentials.createInsecure(), {
      ...grpcClientOptions, interceptors: [serviceIdentityInterceptor(new IdentitySigner(SECRET, 'caller'))],
    });
    const health = new healthProto.grpc.health.v1.Health(addr, grpc.credentials.createInsecure());
    const status = () => new Promise<string | undefined>((resolve) => health.Check({ service: '' }, (err, res) => resolve(err ? err.message : res?.status)));
    try {
      await expect(callUnary(anonymous, anonymous.Authenticate, { secret: 's' })).rejects.toMatchObject({ status: 401 });
      expect(await callUnary(signedClient, signedClient.Authenticate, { secret: 's' })).toMatchObject({ account_id: 'for-s' });
      expect(await status()).toBe('SERVING');
      storeUp = false;
      expect(await status()).toBe('NOT_SERVING');
    } finally {
      anonymous.close();
      signedClient.close();
      health.close();
      await svc.stop();
    }
  });
});

type ReflectionClient = grpc.Client & { ServerReflectionInfo(): grpc.ClientDuplexStream<object, ReflectionAnswer> };
interface ReflectionAnswer {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_message: string };
}

/** What `grpcurl list` / `describe` send: one request on the v1 reflection stream, one answer. */
function reflect(address: string, request: object): Promise<ReflectionAnswer> {
  const file = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/grpc/reflection/v1/reflection.proto');
  const loaded = grpc.loadPackageDefinition(protoLoader.loadSync(file, { keepCase: true })) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: new (a: string, c: grpc.ChannelCredentials) => ReflectionClient } } };
  };
  const client = new loaded.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (answer: ReflectionAnswer) => { resolve(answer); call.end(); });
    call.on('error', reject);
    call.on('end', () => client.close());
    call.write(request);
  });
}

describe('startService: gRPC server reflection', () => {
  it('lists what the server serves and describes it, as grpcurl does', async () => {
    const svc = await startService(spec({ grpcPort: 0 }), async () => ({
      routes: [],
      grpc: [{ definition: keysProto.gateway.keys.v1.KeysService.service, handlers: { Authenticate: () => undefined } }],
    }));
    try {
      const address = `127.0.0.1:${svc.grpcPort}`;
      const listed = await reflect(address, { list_services: '*' });
      expect(listed.list_services_response?.service.map((s) => s.name).sort()).toEqual(['gateway.keys.v1.KeysService', 'grpc.health.v1.Health']);
      const described = await reflect(address, { file_containing_symbol: 'gateway.keys.v1.KeysService' });
      expect(described.file_descriptor_response?.file_descriptor_proto.length).toBeGreaterThan(0);
      expect(Buffer.concat(described.file_descriptor_response!.file_descriptor_proto).toString('latin1')).toContain('Authenticate');
      const unknown = await reflect(address, { file_containing_symbol: 'gateway.billing.v1.BillingService' });
      expect(unknown.error_response).toBeDefined();
    } finally {
      await svc.stop();
    }
  });
});

describe('startService: stop order', () => {
  /** Registers fakes of two of each kind, recording when each is stopped. */
  function registerFakes(scope: ServiceScope, order: string[]): void {
    for (const name of ['consumer', 'sweeper']) scope.background(name, { stop: async () => { order.push(name); } });
    for (const name of ['outbox', 'publisher']) scope.publisher(name, { close: async () => { order.push(name); } });
    for (const name of ['billing-client', 'provider-client']) scope.client(name, { close: () => { order.push(name); } });
  }

  it('draining, then in-flight requests finish, then background work, publishers and clients, each in reverse registration order', async () => {
    const order: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    let arrived!: () => void;
    const inFlight = new Promise<void>((resolve) => { arrived = resolve; });
    let scope!: ServiceScope;
    const svc = await startService(spec(), async (s) => {
      scope = s;
      registerFakes(s, order);
      const router = Router();
      router.get('/v1/slow', async (_req, res) => {
        arrived();
        await released;
        order.push(`request finished (ready: ${(await s.health.report()).ready})`);
        res.json({ ok: true });
      });
      return { routes: [router] };
    });
    const slow = fetch(`http://127.0.0.1:${svc.httpPort}/v1/slow`, { headers: signed('GET', '/v1/slow', null) });
    await inFlight;
    const stopped = svc.stop();
    release();
    expect((await slow).status).toBe(200);
    await stopped;
    expect(order).toEqual([
      'request finished (ready: false)',
      'sweeper', 'consumer',
      'publisher', 'outbox',
      'provider-client', 'billing-client',
    ]);
    expect((await scope.health.report()).ready).toBe(false);
    await expect(fetch(`http://127.0.0.1:${svc.httpPort}/livez`)).rejects.toThrow();
    // Stopping twice runs the order once.
    await svc.stop();
    expect(order).toHaveLength(7);
  }, 20_000);

  it('a failing step is logged and the rest still run', async () => {
    const order: string[] = [];
    const svc = await startService(spec(), async (s) => {
      s.background('first', { stop: async () => { order.push('first'); } });
      s.background('broken', { stop: async () => { throw new Error('boom'); } });
      s.client('client', { close: () => { order.push('client'); } });
      return { routes: [] };
    });
    await svc.stop();
    expect(order).toEqual(['first', 'client']);
  });
});

describe('startService: half started', () => {
  it('a wiring that fails closes what it had registered, in the stop order', async () => {
    const order: string[] = [];
    await expect(startService(spec(), async (s) => {
      s.client('client', { close: () => { order.push('client'); } });
      s.background('consumer', { stop: async () => { order.push('consumer'); } });
      throw new Error('indexes failed');
    })).rejects.toThrow('indexes failed');
    expect(order).toEqual(['consumer', 'client']);
  });

  it('a port in use closes the gRPC server already listening and everything registered', async () => {
    const taken = await listenOn(0);
    const grpcPort = await freePort();
    const order: string[] = [];
    try {
      await expect(startService(spec({ httpPort: portOf(taken), grpcPort }), async (s): Promise<ServiceSurfaces> => {
        s.background('consumer', { stop: async () => { order.push('consumer'); } });
        s.publisher('publisher', { close: async () => { order.push('publisher'); } });
        return { routes: [], grpc: [{ definition: keysProto.gateway.keys.v1.KeysService.service, handlers: { Authenticate: () => undefined } }] };
      })).rejects.toThrow(/EADDRINUSE/);
      expect(order).toEqual(['consumer', 'publisher']);
      // The gRPC port it had bound is free again.
      await closeNet(await listenOn(grpcPort));
    } finally {
      await closeNet(taken);
    }
  });
});

function listenOn(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const portOf = (server: Server) => (server.address() as AddressInfo).port;
const closeNet = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

async function freePort(): Promise<number> {
  const server = await listenOn(0);
  const port = portOf(server);
  await closeNet(server);
  return port;
}
