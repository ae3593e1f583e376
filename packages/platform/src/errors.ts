import * as grpc from '@grpc/grpc-js';

/**
 * Typed domain errors. Domain code throws these; the HTTP mapper and the gRPC mapper below are the only
 * places that turn them into statuses.
 */
export class GatewayError extends Error {
  constructor(
    message: string,
    /** HTTP status this error maps to. */
    readonly status: number,
    /** Spec `error.type`. */
    readonly type: string,
    /** Spec `error.code`. */
    readonly code: string,
    /** Offending request parameter, when the caller can fix one. */
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InputError extends GatewayError {
  constructor(message: string, param: string | null = null, code = 'invalid_request') {
    super(message, 400, 'invalid_request_error', code, param);
  }
}
export class AuthenticationError extends GatewayError {
  constructor(message = 'Missing or invalid API key', code = 'invalid_api_key') {
    super(message, 401, 'authentication_error', code);
  }
}
export class PaymentRequiredError extends GatewayError {
  constructor(message = 'Insufficient balance', code = 'insufficient_balance') {
    super(message, 402, 'insufficient_balance_error', code);
  }
}
export class PermissionError extends GatewayError {
  constructor(message = 'This key may not perform this action', code = 'permission_denied') {
    super(message, 403, 'permission_error', code);
  }
}
export class NotFoundError extends GatewayError {
  constructor(message: string, param: string | null = null, code = 'not_found') {
    super(message, 404, 'not_found_error', code, param);
  }
}
export class ConflictError extends GatewayError {
  constructor(message: string, code = 'conflict') {
    super(message, 409, 'conflict_error', code);
  }
}
export class PayloadTooLargeError extends GatewayError {
  constructor(message = 'Request body too large') {
    super(message, 413, 'invalid_request_error', 'payload_too_large');
  }
}
export class UnsupportedMediaTypeError extends GatewayError {
  constructor(message: string, param: string | null, code = 'unsupported_media_type') {
    super(message, 415, 'invalid_request_error', code, param);
  }
}
export class RateLimitError extends GatewayError {
  constructor(message = 'Rate limit exceeded', retryAfterSeconds?: number) {
    super(message, 429, 'rate_limit_error', 'rate_limit_exceeded', null,
      retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : {});
  }
}
export class NotImplementedError extends GatewayError {
  constructor(message: string, param: string | null = null) {
    super(message, 501, 'invalid_request_error', 'unsupported_feature', param);
  }
}
export class UpstreamError extends GatewayError {
  constructor(message: string, readonly upstreamStatus?: number, code = 'upstream_error', status = 502) {
    super(message, status, 'upstream_error', code);
  }
}
export class UnavailableError extends GatewayError {
  constructor(message = 'Service unavailable', code = 'service_unavailable') {
    super(message, 503, 'service_unavailable_error', code);
  }
}
export class TimeoutError extends GatewayError {
  constructor(message = 'Upstream timed out') {
    super(message, 504, 'timeout_error', 'timeout');
  }
}

/** The spec's error envelope. */
export interface ErrorEnvelope {
  code: string;
  error: { message: string; type: string; param: string | null; code: string; traceId: string };
  traceId: string;
}

export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const grpcErr = err as { code?: number; details?: string; metadata?: grpc.Metadata };
  if (typeof grpcErr?.code === 'number' && grpcErr.metadata instanceof grpc.Metadata) return fromGrpcError(grpcErr as grpc.ServiceError);
  return new GatewayError('Internal server error', 500, 'api_error', 'internal_error');
}

export function errorEnvelope(err: GatewayError, traceId: string): ErrorEnvelope {
  return {
    code: String(err.status),
    error: { message: err.message, type: err.type, param: err.param, code: err.code, traceId },
    traceId,
  };
}

const HTTP_TO_GRPC: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  402: grpc.status.FAILED_PRECONDITION,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  409: grpc.status.ALREADY_EXISTS,
  413: grpc.status.RESOURCE_EXHAUSTED,
  415: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.RESOURCE_EXHAUSTED,
  501: grpc.status.UNIMPLEMENTED,
  502: grpc.status.UNAVAILABLE,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.DEADLINE_EXCEEDED,
};

/** Maps a typed error to a gRPC status; the typed fields ride in metadata so a client can rebuild it. */
export function toGrpcError(err: unknown): Partial<grpc.StatusObject> {
  const e = toGatewayError(err);
  const metadata = new grpc.Metadata();
  metadata.set('gw-http-status', String(e.status));
  metadata.set('gw-error-type', e.type);
  metadata.set('gw-error-code', e.code);
  if (e.param) metadata.set('gw-error-param', e.param);
  return { code: HTTP_TO_GRPC[e.status] ?? grpc.status.INTERNAL, details: e.message, metadata };
}

const GRPC_TO_HTTP: Partial<Record<grpc.status, number>> = {
  [grpc.status.INVALID_ARGUMENT]: 400,
  [grpc.status.UNAUTHENTICATED]: 401,
  [grpc.status.PERMISSION_DENIED]: 403,
  [grpc.status.NOT_FOUND]: 404,
  [grpc.status.ALREADY_EXISTS]: 409,
  [grpc.status.RESOURCE_EXHAUSTED]: 429,
  [grpc.status.UNIMPLEMENTED]: 501,
  [grpc.status.DEADLINE_EXCEEDED]: 504,
};

/** Rebuilds a typed error from a gRPC failure (ours carry metadata; others map by status code). */
export function fromGrpcError(err: grpc.ServiceError): GatewayError {
  const md = err.metadata;
  const get = (k: string) => (md?.get(k)[0] as string | undefined) ?? undefined;
  const httpStatus = Number(get('gw-http-status'));
  if (httpStatus) {
    return new GatewayError(err.details || err.message, httpStatus, get('gw-error-type') ?? 'api_error',
      get('gw-error-code') ?? 'internal_error', get('gw-error-param') ?? null);
  }
  if (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED) {
    return new UnavailableError(`Internal service unavailable: ${err.details || err.message}`);
  }
  const status = GRPC_TO_HTTP[err.code as grpc.status] ?? 500;
  return new GatewayError(err.details || 'Internal server error', status, status === 500 ? 'api_error' : 'invalid_request_error',
    status === 500 ? 'internal_error' : 'invalid_request');
}
