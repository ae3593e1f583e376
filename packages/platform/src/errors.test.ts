import * as grpc from '@grpc/grpc-js';
import type { Server } from 'node:http';
import { healthProto, type HealthHandlers } from '@gw/proto';
import {
  AuthenticationError, ConflictError, fromGrpcError, GatewayError, InputError, NotFoundError, NotImplementedError, OverloadedError,
  PayloadTooLargeError, PaymentRequiredError, PermissionError, RateLimitError, TimeoutError, toGrpcError, UnavailableError,
  UnsupportedMediaTypeError, UpstreamError,
} from './errors';
import * as errors from './errors';
import { callUnary, startGrpcServer, unaryHandler, type GrpcServerHandle } from './grpc';
import { Health } from './health';
import { closeServer, createHttpApp, finishHttpApp, listen } from './http';
import { createLogger } from './logger';

const logger = createLogger('errors-test', 'silent');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (res: Response) => res.json() as Promise<any>;

interface Case {
  name: string;
  make: () => GatewayError;
  status: number;
  type: string;
  code: string;
  param: string | null;
  grpcCode: grpc.status;
  cls: abstract new (...args: never[]) => GatewayError;
}

const CASES: Case[] = [
  { name: 'InputError', make: () => new InputError('bad temperature', 'temperature'), status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'temperature', grpcCode: grpc.status.INVALID_ARGUMENT, cls: InputError },
  { name: 'InputError with its own code', make: () => new InputError('stream not allowed', 'stream', 'invalid_stream'), status: 400, type: 'invalid_request_error', code: 'invalid_stream', param: 'stream', grpcCode: grpc.status.INVALID_ARGUMENT, cls: InputError },
  { name: 'AuthenticationError', make: () => new AuthenticationError(), status: 401, type: 'authentication_error', code: 'invalid_api_key', param: null, grpcCode: grpc.status.UNAUTHENTICATED, cls: AuthenticationError },
  { name: 'PaymentRequiredError', make: () => new PaymentRequiredError(), status: 402, type: 'insufficient_balance_error', code: 'insufficient_balance', param: null, grpcCode: grpc.status.FAILED_PRECONDITION, cls: PaymentRequiredError },
  { name: 'PaymentRequiredError (key limit)', make: () => new PaymentRequiredError('limit', 'key_limit_exceeded'), status: 402, type: 'insufficient_balance_error', code: 'key_limit_exceeded', param: null, grpcCode: grpc.status.FAILED_PRECONDITION, cls: PaymentRequiredError },
  { name: 'PermissionError', make: () => new PermissionError(), status: 403, type: 'permission_error', code: 'permission_denied', param: null, grpcCode: grpc.status.PERMISSION_DENIED, cls: PermissionError },
  { name: 'NotFoundError', make: () => new NotFoundError('no such model', 'model', 'model_not_found'), status: 404, type: 'not_found_error', code: 'model_not_found', param: 'model', grpcCode: grpc.status.NOT_FOUND, cls: NotFoundError },
  { name: 'ConflictError', make: () => new ConflictError('exists'), status: 409, type: 'conflict_error', code: 'conflict', param: null, grpcCode: grpc.status.ALREADY_EXISTS, cls: ConflictError },
  { name: 'PayloadTooLargeError', make: () => new PayloadTooLargeError(), status: 413, type: 'invalid_request_error', code: 'payload_too_large', param: null, grpcCode: grpc.status.RESOURCE_EXHAUSTED, cls: PayloadTooLargeError },
  { name: 'RateLimitError', make: () => new RateLimitError('slow down', 7), status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null, grpcCode: grpc.status.RESOURCE_EXHAUSTED, cls: RateLimitError },
  { name: 'NotImplementedError', make: () => new NotImplementedError('stored state', 'store'), status: 501, type: 'invalid_request_error', code: 'unsupported_feature', param: 'store', grpcCode: grpc.status.UNIMPLEMENTED, cls: NotImplementedError },
  { name: 'UpstreamError', make: () => new UpstreamError('provider failed', 500), status: 502, type: 'upstream_error', code: 'upstream_error', param: null, grpcCode: grpc.status.UNAVAILABLE, cls: UpstreamError },
  { name: 'UnavailableError', make: () => new UnavailableError(), status: 503, type: 'service_unavailable_error', code: 'service_unavailable', param: null, grpcCode: grpc.status.UNAVAILABLE, cls: UnavailableError },
  { name: 'OverloadedError', make: () => new OverloadedError('too many bodies held', 1), status: 503, type: 'service_unavailable_error', code: 'server_busy', param: null, grpcCode: grpc.status.UNAVAILABLE, cls: OverloadedError },
  { name: 'UnsupportedMediaTypeError', make: () => new UnsupportedMediaTypeError('not json', 'content-type'), status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', param: 'content-type', grpcCode: grpc.status.INVALID_ARGUMENT, cls: UnsupportedMediaTypeError },
  { name: 'GatewayError', make: () => new GatewayError('teapot', 418, 'api_error', 'teapot', 'x'), status: 418, type: 'api_error', code: 'teapot', param: 'x', grpcCode: grpc.status.INTERNAL, cls: GatewayError },
  { name: 'TimeoutError', make: () => new TimeoutError(), status: 504, type: 'timeout_error', code: 'timeout', param: null, grpcCode: grpc.status.DEADLINE_EXCEEDED, cls: TimeoutError },
];

const SECRET_DETAIL = 'connect ECONNREFUSED mongodb://admin:hunter2@10.0.0.7';

describe('typed errors over HTTP', () => {
  let server: Server;
  let base: string;
  const thrown = new Map<string, () => unknown>();

  beforeAll(async () => {
    const app = createHttpApp({ logger, health: new Health(), bodyLimitBytes: 1024 });
    app.get('/throw/:name', async (req) => {
      throw thrown.get(String(req.params.name))!();
    });
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    CASES.forEach((c, i) => thrown.set(String(i), c.make));
    thrown.set('plain', () => new Error(SECRET_DETAIL));
    thrown.set('string', () => SECRET_DETAIL);
  });
  afterAll(() => closeServer(server, 0));

  it.each(CASES.map((c, i) => [c.name, i, c] as const))('%s -> its HTTP status and envelope', async (_name, i, c) => {
    const res = await fetch(`${base}/throw/${i}`);
    expect(res.status).toBe(c.status);
    const traceId = res.headers.get('x-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(await json(res)).toEqual({
      code: String(c.status),
      error: { message: c.make().message, type: c.type, param: c.param, code: c.code, traceId },
      traceId,
    });
  });

  it('a rate limit carries Retry-After', async () => {
    const res = await fetch(`${base}/throw/${CASES.findIndex((c) => c.name === 'RateLimitError')}`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
  });

  it.each([['an Error', 'plain'], ['a thrown string', 'string']])('%s that is not a gateway error is a 500 that leaks nothing', async (_what, name) => {
    const res = await fetch(`${base}/throw/${name}`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('ECONNREFUSED');
    const body = JSON.parse(text);
    expect(body).toMatchObject({ code: '500', error: { type: 'api_error', code: 'internal_error', param: null, message: 'Internal server error' } });
  });
});

describe('typed errors over gRPC', () => {
  let handle: GrpcServerHandle;
  type CheckCallback = (err: grpc.ServiceError | null, res?: unknown) => void;
  let client: grpc.Client & { Check(req: { service: string }, md: grpc.Metadata, opts: grpc.CallOptions, cb: CheckCallback): grpc.ClientUnaryCall; Check(req: { service: string }, cb: CheckCallback): grpc.ClientUnaryCall };
  let next: () => unknown = () => undefined;

  beforeAll(async () => {
    // Any unary service will do to carry a failure over the wire; the Health service's Check is one.
    handle = await startGrpcServer('127.0.0.1:0', (server) => {
      const handlers: HealthHandlers = {
        Check: unaryHandler(logger, async () => { throw next(); }),
        Watch: (call) => call.end(),
      };
      server.addService(healthProto.grpc.health.v1.Health.service, handlers);
    });
    client = new healthProto.grpc.health.v1.Health(`127.0.0.1:${handle.port}`, grpc.credentials.createInsecure()) as unknown as typeof client;
  });
  afterAll(async () => {
    client.close();
    await handle.shutdown(0);
  });

  /** The raw failure as it arrives over the wire. */
  function rawCall(): Promise<grpc.ServiceError> {
    return new Promise((resolve, reject) => {
      client.Check({ service: '' }, (err) => (err ? resolve(err) : reject(new Error('call succeeded'))));
    });
  }

  /** Everything a caller can observe on a typed error: its class, message and every field (headers, subclass fields). */
  const observable = (e: unknown) => {
    const err = e as GatewayError;
    return { cls: err.constructor, name: err.name, message: err.message, ...Object.fromEntries(Object.entries(err)) };
  };

  it('every exported GatewayError class has a round-trip case', () => {
    const exported = Object.values(errors).filter((v): v is typeof GatewayError => typeof v === 'function' && (v === GatewayError || v.prototype instanceof GatewayError));
    expect(new Set(exported)).toEqual(new Set(CASES.map((c) => c.cls)));
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s arrives as the same class with every field across the wire', async (_name, c) => {
    next = c.make;
    const raw = await rawCall();
    expect(raw.code).toBe(c.grpcCode);
    expect(raw.details).toBe(c.make().message);
    const back = fromGrpcError(raw);
    expect(back).toBeInstanceOf(c.cls);
    expect(observable(back)).toEqual(observable(c.make()));
    expect({ status: back.status, type: back.type, code: back.code, param: back.param }).toEqual({ status: c.status, type: c.type, code: c.code, param: c.param });

    // callUnary, which every internal client uses, hands back the same typed error.
    const viaCall = await callUnary(client, client.Check, { service: '' }).catch((e: unknown) => e);
    expect(viaCall).toBeInstanceOf(c.cls);
    expect(observable(viaCall)).toEqual(observable(c.make()));
  });

  it('keeps Retry-After and an upstream status', async () => {
    next = () => new RateLimitError('slow down', 7);
    expect(await callUnary(client, client.Check, { service: '' }).catch((e: GatewayError) => e.headers)).toEqual({ 'retry-after': '7' });
    next = () => new UpstreamError('provider failed', 529, 'overloaded', 503);
    const upstream = await callUnary(client, client.Check, { service: '' }).catch((e: unknown) => e);
    expect(upstream).toBeInstanceOf(UpstreamError);
    expect(upstream).toMatchObject({ upstreamStatus: 529, status: 503, code: 'overloaded' });
  });

  it('carries text that plain metadata cannot (non-ASCII message and param)', async () => {
    next = () => new InputError('température hors limites ✗', 'messages[0].content.ünïcode');
    const back = await callUnary(client, client.Check, { service: '' }).catch((e: unknown) => e);
    expect(observable(back)).toEqual(observable(next()));
  });

  it('a subclass defined elsewhere arrives as its nearest platform class', async () => {
    class DuplicateThing extends ConflictError {}
    next = () => new DuplicateThing('already there', 'duplicate');
    const back = await callUnary(client, client.Check, { service: '' }).catch((e: unknown) => e);
    expect(back).toBeInstanceOf(ConflictError);
    expect(back).toMatchObject({ status: 409, code: 'duplicate', message: 'already there' });
  });

  it('toGrpcError -> fromGrpcError keeps class and fields without a server in between', () => {
    for (const c of CASES) {
      const status = toGrpcError(c.make());
      const back = fromGrpcError({ code: status.code!, details: status.details!, metadata: status.metadata!, message: '', name: 'Error' } as grpc.ServiceError);
      expect([c.name, observable(back)]).toEqual([c.name, observable(c.make())]);
    }
  });

  it.each([
    ['not JSON', '{not json'],
    ['not an error', '{"status":"x"}'],
  ])('a payload that is %s falls back to the status code', (_what, payload) => {
    const metadata = new grpc.Metadata();
    metadata.set('gw-error-bin', Buffer.from(payload));
    const back = fromGrpcError({ code: grpc.status.NOT_FOUND, details: 'gone', metadata, message: '', name: 'Error' } as grpc.ServiceError);
    expect(back).toMatchObject({ status: 404 });
  });

  it('a payload naming no class of ours, or fields it may not set, rebuilds a plain GatewayError', () => {
    // Written as JSON text: an object literal would not hold "__proto__" as a field.
    const wire = '{"classes":["toString","constructor"],"message":"m","status":409,"type":"conflict_error","code":"c","param":null,"headers":{},"fields":{"__proto__":"x","status":"x","extra":1}}';
    const metadata = new grpc.Metadata();
    metadata.set('gw-error-bin', Buffer.from(wire));
    const back = fromGrpcError({ code: grpc.status.ALREADY_EXISTS, details: 'm', metadata, message: '', name: 'Error' } as grpc.ServiceError);
    expect(Object.getPrototypeOf(back)).toBe(GatewayError.prototype);
    expect(back).toMatchObject({ status: 409, code: 'c', extra: 1 });
  });

  it('a non-gateway error becomes INTERNAL and its message stays on the server', async () => {
    next = () => new Error(SECRET_DETAIL);
    const raw = await rawCall();
    expect(raw.code).toBe(grpc.status.INTERNAL);
    expect(raw.details).not.toContain('hunter2');
    const back = fromGrpcError(raw);
    expect({ status: back.status, type: back.type, code: back.code, message: back.message })
      .toEqual({ status: 500, type: 'api_error', code: 'internal_error', message: 'Internal server error' });
  });

  it('an unreachable service is a 503 service_unavailable, not a 500', async () => {
    const probe = await startGrpcServer('127.0.0.1:0', () => {});
    const deadPort = probe.port;
    await probe.shutdown(0);
    const dead = new healthProto.grpc.health.v1.Health(`127.0.0.1:${deadPort}`, grpc.credentials.createInsecure());
    try {
      const err = await callUnary(dead, dead.Check, { service: '' }, { deadlineMs: 1000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnavailableError);
      expect(err).toMatchObject({ status: 503, code: 'service_unavailable' });
    } finally {
      dead.close();
    }
  });
});
