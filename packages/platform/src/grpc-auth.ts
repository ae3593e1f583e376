import * as grpc from '@grpc/grpc-js';
import { AuthenticationError } from './errors';
import { unaryHandler } from './grpc';
import { newTraceId } from './ids';
import { GRPC_BINDING_METHOD, IDENTITY_HEADER, type IdentitySigner, type IdentityVerifier } from './identity-token';
import type { Logger } from './logger';

/** Who made a gRPC call. */
export interface GrpcCaller {
  /** The only account the caller may touch; null for a platform service, which acts for any account. */
  accountId: string | null;
}

/** Resolves an API key to its account (keys' `Authenticate`); AuthenticationError when it is no valid key. */
export interface ApiKeyAccounts {
  accountOf(secret: string, traceId?: string): Promise<string>;
}

const first = (md: grpc.Metadata, key: string) => {
  const v = md.get(key)[0];
  return typeof v === 'string' ? v : undefined;
};

/**
 * The credentials a gRPC server accepts: a service identity (a signed token in `x-gw-identity` metadata, bound
 * to the method path) or an API key (`authorization: Bearer <key>`), which scopes the call to the key's account.
 */
export class GrpcCallAuthenticator {
  constructor(private readonly verifier: IdentityVerifier, private readonly apiKeys: ApiKeyAccounts | null) {}

  async authenticate(call: grpc.ServerUnaryCall<unknown, unknown>): Promise<GrpcCaller> {
    const md = call.metadata;
    const token = first(md, IDENTITY_HEADER);
    if (token) {
      const claims = this.verifier.verify(token, { method: GRPC_BINDING_METHOD, path: call.getPath() });
      return { accountId: claims.identity?.accountId ?? null };
    }
    const authorization = first(md, 'authorization');
    const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (bearer && this.apiKeys) return { accountId: await this.apiKeys.accountOf(bearer[1], first(md, 'x-trace-id')) };
    throw new AuthenticationError('Missing credentials: send "authorization: Bearer <API key>" metadata', 'missing_api_key');
  }
}

/** `unaryHandler` for an RPC that needs an authenticated caller; unauthenticated calls end UNAUTHENTICATED. */
export function authenticatedUnaryHandler<Req, Res>(
  logger: Logger,
  auth: GrpcCallAuthenticator,
  fn: (req: Req, caller: GrpcCaller, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return unaryHandler(logger, async (req, call) => fn(req, await auth.authenticate(call as grpc.ServerUnaryCall<unknown, unknown>), call));
}

/** The account a scoped caller may touch; a service may touch any. */
export function requireOwnAccount(caller: GrpcCaller, accountId: string): void {
  if (caller.accountId !== null && caller.accountId !== accountId) {
    throw new AuthenticationError('These credentials do not belong to this account', 'account_mismatch');
  }
}

/** Client side: signs every call of a service's client with its service identity, bound to the method path. */
export function serviceIdentityInterceptor(signer: IdentitySigner): grpc.Interceptor {
  return (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      const traceId = first(metadata, 'x-trace-id') ?? newTraceId();
      metadata.set(IDENTITY_HEADER, signer.mint({ method: GRPC_BINDING_METHOD, path: options.method_definition.path }, null, traceId));
      next(metadata, listener);
    },
  });
}
