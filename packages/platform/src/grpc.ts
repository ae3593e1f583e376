import * as grpc from '@grpc/grpc-js';
import { fromGrpcError, toGrpcError } from './errors';
import type { Logger } from './logger';
import { injectTraceContext, startServerSpan, tracingEnabled } from './tracing';

/** Wraps an async unary handler: thrown typed errors become real gRPC statuses through the one mapper. */
export function unaryHandler<Req, Res>(logger: Logger, fn: (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const span = tracingEnabled() ? startServerSpan('gateway.grpc', call.getPath(), call.metadata.getMap(), { 'rpc.system': 'grpc', 'rpc.method': call.getPath() }) : null;
    const run = () => fn(call.request, call).then(
      (res) => { span?.end(); callback(null, res); },
      (err) => {
        const status = toGrpcError(err);
        if (status.code === grpc.status.INTERNAL) logger.error({ err }, 'grpc handler failed');
        span?.end(status.code === grpc.status.INTERNAL || status.code === grpc.status.UNAVAILABLE ? 500 : undefined);
        callback(status as grpc.ServiceError);
      },
    );
    if (span) span.run(run);
    else run();
  };
}

export interface GrpcServerHandle {
  server: grpc.Server;
  port: number;
  /** Stops accepting calls, lets in-flight calls finish (bounded), then closes. */
  shutdown(graceMs?: number): Promise<void>;
}

export async function startGrpcServer(
  address: string,
  register: (server: grpc.Server) => void,
): Promise<GrpcServerHandle> {
  const server = new grpc.Server({ 'grpc.keepalive_permit_without_calls': 1 });
  register(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    server,
    port,
    shutdown: (graceMs = 5000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/**
 * Deadline of an internal call on the request path (authenticate a key, hold spend). Long enough to ride out
 * a burst on a busy store or a GC pause of a peer; a peer that is really down fails faster (UNAVAILABLE).
 */
export const INTERNAL_CALL_DEADLINE_MS = 5_000;

export interface CallOptions {
  /** Per-call deadline; every internal call has one. */
  deadlineMs?: number;
  traceId?: string;
}

type UnaryMethod<Req, Res> = (req: Req, md: grpc.Metadata, opts: grpc.CallOptions, cb: grpc.requestCallback<Res>) => grpc.ClientUnaryCall;

/** Promise form of a unary call with a deadline; failures come back as typed gateway errors. */
export function callUnary<Req, Res>(client: grpc.Client, method: UnaryMethod<Req, Res>, req: Req, opts: CallOptions = {}): Promise<Res> {
  const md = new grpc.Metadata();
  if (opts.traceId) md.set('x-trace-id', opts.traceId);
  if (tracingEnabled()) {
    const carrier: Record<string, string> = {};
    injectTraceContext(carrier);
    for (const [name, value] of Object.entries(carrier)) md.set(name, value);
  }
  const deadline = new Date(Date.now() + (opts.deadlineMs ?? INTERNAL_CALL_DEADLINE_MS));
  return new Promise<Res>((resolve, reject) => {
    method.call(client, req, md, { deadline }, (err, res) => {
      if (err) reject(fromGrpcError(err));
      else resolve(res as Res);
    });
  });
}

export const grpcClientOptions: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.keepalive_permit_without_calls': 1,
};
