import * as grpc from '@grpc/grpc-js';
import { healthProto, type HealthClient } from '@gw/proto';
import { AuthenticationError, type GatewayError } from './errors';
import { callUnary, grpcClientOptions, startGrpcServer, type GrpcServerHandle } from './grpc';
import { authenticatedUnaryHandler, GrpcCallAuthenticator, requireOwnAccount, serviceIdentityInterceptor, type ApiKeyAccounts, type GrpcCaller } from './grpc-auth';
import { IdentitySigner, IdentityVerifier } from './identity-token';
import { createLogger } from './logger';

const SECRET = 'grpc-auth-test-identity-secret-0123456789abcdef';
const CHECK = '/grpc.health.v1.Health/Check';

/** API keys as a keys service would answer them: one known key of acct_a. */
const apiKeys: ApiKeyAccounts = {
  identityOf: async (secret) => {
    if (secret === 'sk-gw-v1-known') return { accountId: 'acct_a', keyHash: 'kh_a', isManagement: false, keyLimitMicros: null, keyLimitReset: null };
    throw new AuthenticationError();
  },
};

/**
 * A server whose one unary RPC (the health Check's shape, a message with one string) answers with the
 * authenticated caller, so each test sees what the authenticator decided.
 */
describe('GrpcCallAuthenticator over a real gRPC server', () => {
  let server: GrpcServerHandle;
  const clients: grpc.Client[] = [];

  beforeAll(async () => {
    const auth = new GrpcCallAuthenticator(new IdentityVerifier(SECRET), apiKeys);
    server = await startGrpcServer('127.0.0.1:0', (s) => {
      s.addService(healthProto.grpc.health.v1.Health.service, {
        Check: authenticatedUnaryHandler(createLogger('grpc-auth-test', 'silent'), auth, async (_req: unknown, caller: GrpcCaller) => (
          { status: caller.accountId === null ? 'SERVING' : 'NOT_SERVING' }
        )),
        Watch: () => undefined,
      } as grpc.UntypedServiceImplementation);
    });
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await server.shutdown(100);
  });

  const client = (...interceptors: grpc.Interceptor[]) => {
    const c = new healthProto.grpc.health.v1.Health(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), { ...grpcClientOptions, interceptors }) as HealthClient;
    clients.push(c);
    return c;
  };
  const withMetadata = (key: string, value: () => string): grpc.Interceptor => (options, next) => new grpc.InterceptingCall(next(options), {
    start: (md, listener, go) => { md.set(key, value()); go(md, listener); },
  });
  const check = (c: HealthClient) => callUnary<{ service: string }, { status: string }>(c, c.Check, { service: '' })
    .then((r) => r.status, (e: GatewayError) => `${e.status} ${e.code}`);

  it('a service identity acts for any account', async () => {
    expect(await check(client(serviceIdentityInterceptor(new IdentitySigner(SECRET, 'inference'))))).toBe('SERVING');
  });

  it('an API key acts for its own account only', async () => {
    expect(await check(client(withMetadata('authorization', () => 'Bearer sk-gw-v1-known')))).toBe('NOT_SERVING');
  });

  it.each<[string, grpc.Interceptor[], string]>([
    ['no credentials', [], '401 missing_api_key'],
    ['an unknown API key', [withMetadata('authorization', () => 'Bearer sk-gw-v1-unknown')], '401 invalid_api_key'],
    ['a token signed with another secret', [serviceIdentityInterceptor(new IdentitySigner('another-secret-of-enough-length-0123456789', 'inference'))], '401 identity_invalid'],
    ['a genuine token bound to another method', [withMetadata('x-gw-identity', () => new IdentitySigner(SECRET, 'inference').mint({ method: 'GRPC', path: '/other.Service/Method' }, null, 't'))], '401 identity_mismatch'],
    ['a genuine token of an HTTP request', [withMetadata('x-gw-identity', () => new IdentitySigner(SECRET, 'edge').mint({ method: 'POST', path: CHECK }, null, 't'))], '401 identity_mismatch'],
  ])('%s is UNAUTHENTICATED', async (_what, interceptors, outcome) => {
    expect(await check(client(...interceptors))).toBe(outcome);
  });

  it('a replayed service token is refused', async () => {
    const token = new IdentitySigner(SECRET, 'inference').mint({ method: 'GRPC', path: CHECK }, null, 't');
    const replaying = client(withMetadata('x-gw-identity', () => token));
    expect(await check(replaying)).toBe('SERVING');
    expect(await check(replaying)).toBe('401 identity_replayed');
  });
});

describe('GrpcCallAuthenticator: who a call acts as', () => {
  const auth = new GrpcCallAuthenticator(new IdentityVerifier(SECRET), apiKeys);
  const callWith = (key: string, value: string) => {
    const metadata = new grpc.Metadata();
    metadata.set(key, value);
    return { metadata, getPath: () => CHECK };
  };

  it('a service acting for an account is scoped to it and carries the identity its token names', async () => {
    const identity = { accountId: 'acct_b', keyHash: 'kh_b', isManagement: false, keyLimitMicros: 5_000_000, keyLimitReset: 'daily' as const };
    const token = new IdentitySigner(SECRET, 'batch').mint({ method: 'GRPC', path: CHECK }, identity, 't');
    expect(await auth.authenticate(callWith('x-gw-identity', token))).toEqual({ accountId: 'acct_b', identity, viaApiKey: false });
  });

  it('an API key acts as its own key', async () => {
    expect(await auth.authenticate(callWith('authorization', 'Bearer sk-gw-v1-known'))).toEqual({
      accountId: 'acct_a', identity: expect.objectContaining({ accountId: 'acct_a', keyHash: 'kh_a' }), viaApiKey: true,
    });
  });
});

describe('requireOwnAccount', () => {
  it('lets a service touch any account and an API key only its own', () => {
    const apiKeyOfA: GrpcCaller = { accountId: 'acct_a', identity: null, viaApiKey: true };
    expect(() => requireOwnAccount({ accountId: null, identity: null, viaApiKey: false }, 'acct_b')).not.toThrow();
    expect(() => requireOwnAccount(apiKeyOfA, 'acct_a')).not.toThrow();
    expect(() => requireOwnAccount(apiKeyOfA, 'acct_b')).toThrow(AuthenticationError);
  });
});
