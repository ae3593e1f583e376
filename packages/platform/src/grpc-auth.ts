import * as grpc from '@grpc/grpc-js';
import { AuthenticationError } from './errors';
import { unaryHandler } from './grpc';
import { newTraceId } from './ids';
import type { Identity } from './identity';
import { GRPC_BINDING_METHOD, IDENTITY_HEADER, type IdentitySigner, type IdentityVerifier } from './identity-token';
import type { Logger } from './logger';

/** Who made a gRPC call. */
export interface GrpcCaller {
  /** The only account the caller may touch; null for a platform service, which acts for any account. */
  accountId: string | null;
  /**
   * The key the call acts as: the API key presented, or the account and key a service's signed token names
   * when it acts for an account. Null for a service acting for none.
   */
  identity: Identity | null;
  /** An API-key caller (an internal team) rather than a platform service. */
  viaApiKey: boolean;
}

/** Resolves an API key to its identity (keys' `Authenticate`); AuthenticationError when it is no valid key. */
export interface ApiKeyAccounts {
  identityOf(secret: string, traceId?: string): Promise<Identity>;
}

/** What the authenticator reads of a call: unary and streaming calls both have it. */
export interface AuthenticatedCall {
  metadata: grpc.Metadata;
  getPath(): string;
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

  async authenticate(call: AuthenticatedCall): Promise<GrpcCaller> {
    const md = call.metadata;
    const token = first(md, IDENTITY_HEADER);
    if (token) {
      const claims = this.verifier.verify(token, { method: GRPC_BINDING_METHOD, path: call.getPath() });
      return { accountId: claims.identity?.accountId ?? null, identity: claims.identity, viaApiKey: false };
    }
    const authorization = first(md, 'authorization');
    const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
    if (bearer && this.apiKeys) {
      const identity = await this.apiKeys.identityOf(bearer[1], first(md, 'x-trace-id'));
      return { accountId: identity.accountId, identity, viaApiKey: true };
    }
    throw new AuthenticationError('Missing credentials: send "authorization: Bearer <API key>" metadata', 'missing_api_key');
  }
}

/** `unaryHandler` for an RPC that needs an authenticated caller; unauthenticated calls end UNAUTHENTICATED. */
export function authenticatedUnaryHandler<Req, Res>(
  logger: Logger,
  auth: GrpcCallAuthenticator,
  fn: (req: Req, caller: GrpcCaller, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res>,
): grpc.handleUnaryCall<Req, Res> {
  return unaryHandler(logger, async (req, call) => fn(req, await auth.authenticate(call), call));
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
