import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';

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
/** The `Retry-After` header of a refusal that says when to come back; none when it does not. */
const retryAfter = (seconds: number | undefined): Record<string, string> => (seconds !== undefined ? { 'retry-after': String(seconds) } : {});

export class RateLimitError extends GatewayError {
  constructor(message = 'Rate limit exceeded', retryAfterSeconds?: number) {
    super(message, 429, 'rate_limit_error', 'rate_limit_exceeded', null,
      retryAfter(retryAfterSeconds));
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
  constructor(message = 'Service unavailable', code = 'service_unavailable', retryAfterSeconds?: number) {
    super(message, 503, 'service_unavailable_error', code, null, retryAfter(retryAfterSeconds));
  }
}
/** The gateway turns a request away to protect itself (a budget is full): neither a fault of ours nor the caller's. */
export class OverloadedError extends UnavailableError {
  constructor(message: string, retryAfterSeconds: number) {
    super(message, 'server_busy', retryAfterSeconds);
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

/** The classes a gRPC peer rebuilds by name; a subclass defined elsewhere arrives as its nearest one here. */
const GRPC_ERROR_CLASSES = new Map<string, new (...args: never[]) => GatewayError>(Object.entries({
  GatewayError, InputError, AuthenticationError, PaymentRequiredError, PermissionError, NotFoundError, ConflictError,
  PayloadTooLargeError, UnsupportedMediaTypeError, RateLimitError, NotImplementedError, UpstreamError, UnavailableError,
  OverloadedError, TimeoutError,
}));
/** Fields every GatewayError has (sent on their own), and names that must never be assigned from the wire. */
const NOT_SUBCLASS_FIELDS = new Set(['message', 'status', 'type', 'code', 'param', 'headers', 'name', 'stack', '__proto__', 'constructor', 'prototype']);
const isSubclassField = ([k, v]: [string, unknown]) => !NOT_SUBCLASS_FIELDS.has(k) && (v === null || ['string', 'number', 'boolean'].includes(typeof v));
/** Binary metadata (JSON): any text survives it, where plain metadata values must be printable ASCII. */
const ERROR_METADATA_KEY = 'gw-error-bin';

const wireErrorSchema = z.object({
  /** The error's class and its ancestors, most specific first. */
  classes: z.array(z.string()),
  message: z.string(),
  status: z.number().int(),
  type: z.string(),
  code: z.string(),
  param: z.string().nullable(),
  headers: z.record(z.string(), z.string()),
  /** A subclass's own fields (e.g. UpstreamError's upstreamStatus). */
  fields: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});
type WireError = z.infer<typeof wireErrorSchema>;

function classChain(err: GatewayError): string[] {
  const names: string[] = [];
  for (let proto = Object.getPrototypeOf(err); proto && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    names.push(proto.constructor.name);
  }
  return names;
}

/** Maps a typed error to a gRPC status; the whole typed error rides in metadata so the client rebuilds it as it was. */
export function toGrpcError(err: unknown): Partial<grpc.StatusObject> {
  const e = toGatewayError(err);
  const fields = Object.fromEntries(Object.entries(e).filter(isSubclassField)) as WireError['fields'];
  const wire: WireError = { classes: classChain(e), message: e.message, status: e.status, type: e.type, code: e.code, param: e.param, headers: e.headers, fields };
  const metadata = new grpc.Metadata();
  metadata.set(ERROR_METADATA_KEY, Buffer.from(JSON.stringify(wire)));
  return { code: HTTP_TO_GRPC[e.status] ?? grpc.status.INTERNAL, details: e.message, metadata };
}

function typedErrorFrom(metadata: grpc.Metadata | undefined): GatewayError | null {
  const raw = metadata?.get(ERROR_METADATA_KEY)[0];
  if (!Buffer.isBuffer(raw)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
  const wire = wireErrorSchema.safeParse(parsed);
  if (!wire.success) return null;
  const { classes, message, status, type, code, param, headers, fields } = wire.data;
  const cls = classes.map((name) => GRPC_ERROR_CLASSES.get(name)).find(Boolean) ?? GatewayError;
  // Built through the base constructor with the subclass as new.target: the class (instanceof, name) is kept
  // without knowing each subclass's constructor arguments.
  const rebuilt = Reflect.construct(GatewayError, [message, status, type, code, param, headers], cls) as GatewayError;
  return Object.assign(rebuilt, Object.fromEntries(Object.entries(fields).filter(isSubclassField)));
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

/** Rebuilds a typed error from a gRPC failure: ours as they were thrown (same class and fields); others by status code. */
export function fromGrpcError(err: grpc.ServiceError): GatewayError {
  const typed = typedErrorFrom(err.metadata);
  if (typed) return typed;
  if (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED) {
    return new UnavailableError(`Internal service unavailable: ${err.details || err.message}`);
  }
  const status = GRPC_TO_HTTP[err.code as grpc.status] ?? 500;
  return new GatewayError(err.details || 'Internal server error', status, status === 500 ? 'api_error' : 'invalid_request_error',
    status === 500 ? 'internal_error' : 'invalid_request');
}
