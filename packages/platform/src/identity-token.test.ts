import * as crypto from 'node:crypto';
import { AuthenticationError, GatewayError } from './errors';
import type { Identity } from './identity';
import { IdentitySigner, IdentityVerifier, ReplayGuard, type RequestBinding } from './identity-token';

// The real comparison, observed: the MAC check must go through crypto's constant-time compare.
jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, timingSafeEqual: jest.fn(actual.timingSafeEqual) };
});

const SECRET = 'identity-token-test-secret-0123456789abcdef';
const OTHER_SECRET = 'another-secret-of-the-same-length-0123456789';
const ID: Identity = { accountId: 'acct_1', keyHash: 'ab'.repeat(32), isManagement: true, keyLimitMicros: 2_500_000, keyLimitReset: 'daily' };
const CHAT: RequestBinding = { method: 'POST', path: '/v1/chat/completions' };

/** A clock the test moves; signer and verifier share it unless a test skews one. */
function clock(start = 1_800_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => { t += ms; } };
}

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as GatewayError).status).toBe(401);
    return (err as GatewayError).code;
  }
  throw new Error('expected a refusal');
};

/** Rebuilds a token with altered claims but the original MAC. */
function tamper(token: string, change: (claims: Record<string, unknown>) => void): string {
  const [v, payload, mac] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  change(claims);
  return `${v}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}`;
}

describe('identity tokens', () => {
  it('round trip: the verifier returns exactly what the edge signed, for the request it was bound to', () => {
    const c = clock();
    const token = new IdentitySigner(SECRET, 'edge', c.now).mint({ method: 'GET', path: '/v1/keys?offset=2' }, ID, 'trace-1');
    const claims = new IdentityVerifier(SECRET, { now: c.now }).verify(token, { method: 'GET', path: '/v1/keys?offset=2' });
    expect(claims).toMatchObject({ identity: ID, traceId: 'trace-1', issuer: 'edge', method: 'GET', path: '/v1/keys?offset=2', issuedAt: c.now() });
    expect(claims.expiresAt - claims.issuedAt).toBe(30_000);
  });

  it('an anonymous route carries a token with no account', () => {
    const token = new IdentitySigner(SECRET, 'edge').mint({ method: 'GET', path: '/v1/models' }, null, 't');
    expect(new IdentityVerifier(SECRET).verify(token, { method: 'GET', path: '/v1/models' }).identity).toBeNull();
  });

  it('every token is unique, even for the same request at the same instant', () => {
    const c = clock();
    const signer = new IdentitySigner(SECRET, 'edge', c.now);
    expect(signer.mint(CHAT, ID, 't')).not.toBe(signer.mint(CHAT, ID, 't'));
  });

  it.each<[string, string | undefined, string]>([
    ['missing', undefined, 'identity_missing'],
    ['empty', '', 'identity_missing'],
    ['not a token', 'hello', 'identity_invalid'],
    ['the old plain headers serialized', 'acct_1', 'identity_invalid'],
    ['wrong version', 'v2.e30.' + Buffer.alloc(32).toString('base64url'), 'identity_invalid'],
    ['a MAC of the wrong length', 'v1.e30.AAAA', 'identity_invalid'],
    ['four parts', 'v1.e30.AAAA.AAAA', 'identity_invalid'],
  ])('refuses a %s token', (_what, token, code) => {
    expect(refusal(() => new IdentityVerifier(SECRET).verify(token, CHAT))).toBe(code);
  });

  it('refuses a token signed with another secret (a forged one)', () => {
    const forged = new IdentitySigner(OTHER_SECRET, 'edge').mint(CHAT, ID, 't');
    expect(refusal(() => new IdentityVerifier(SECRET).verify(forged, CHAT))).toBe('identity_invalid');
  });

  it('refuses a genuine token whose claims were changed (another account, more limit)', () => {
    const token = new IdentitySigner(SECRET, 'edge').mint(CHAT, ID, 't');
    const verifier = new IdentityVerifier(SECRET);
    expect(refusal(() => verifier.verify(tamper(token, (c) => { (c.identity as Identity).accountId = 'acct_victim'; }), CHAT))).toBe('identity_invalid');
    expect(refusal(() => verifier.verify(tamper(token, (c) => { (c.identity as Identity).keyLimitMicros = null; }), CHAT))).toBe('identity_invalid');
  });

  it('refuses a correctly signed payload that is not claims', () => {
    const key = Buffer.from(SECRET);
    const sign = (payload: string) => {
      const body = `v1.${Buffer.from(payload).toString('base64url')}`;
      return `${body}.${crypto.createHmac('sha256', key).update(body).digest('base64url')}`;
    };
    const verifier = new IdentityVerifier(SECRET);
    expect(refusal(() => verifier.verify(sign('not json'), CHAT))).toBe('identity_invalid');
    expect(refusal(() => verifier.verify(sign('{"identity":null}'), CHAT))).toBe('identity_invalid');
  });

  it('compares the MAC in constant time, over the full MAC', () => {
    const spy = crypto.timingSafeEqual as jest.MockedFunction<typeof crypto.timingSafeEqual>;
    spy.mockClear();
    const token = new IdentitySigner(SECRET, 'edge').mint(CHAT, ID, 't');
    const mac = Buffer.from(token.split('.')[2], 'base64url');
    mac[31] ^= 1;
    const lastBitFlipped = `${token.split('.').slice(0, 2).join('.')}.${mac.toString('base64url')}`;
    expect(refusal(() => new IdentityVerifier(SECRET).verify(lastBitFlipped, CHAT))).toBe('identity_invalid');
    expect(spy).toHaveBeenCalledTimes(1);
    expect((spy.mock.calls[0][0] as Buffer).length).toBe(32);
  });

  it('refuses an expired token, and one from the future, with a small tolerance for clock skew', () => {
    const c = clock();
    const verifier = new IdentityVerifier(SECRET, { now: c.now, skewMs: 2_000 });
    const old = new IdentitySigner(SECRET, 'edge', () => c.now() - 32_001).mint(CHAT, ID, 't');
    expect(refusal(() => verifier.verify(old, CHAT))).toBe('identity_expired');
    const barelyFresh = new IdentitySigner(SECRET, 'edge', () => c.now() - 31_000).mint(CHAT, ID, 't');
    expect(verifier.verify(barelyFresh, CHAT).identity).toEqual(ID);
    const future = new IdentitySigner(SECRET, 'edge', () => c.now() + 2_001).mint(CHAT, ID, 't');
    expect(refusal(() => verifier.verify(future, CHAT))).toBe('identity_expired');
  });

  it('refuses a token that claims a longer life than the platform grants', () => {
    const c = clock();
    const longLived = new IdentitySigner(SECRET, 'edge', c.now, 3_600_000).mint(CHAT, ID, 't');
    expect(refusal(() => new IdentityVerifier(SECRET, { now: c.now }).verify(longLived, CHAT))).toBe('identity_expired');
  });

  it.each<[string, RequestBinding]>([
    ['another path', { method: 'POST', path: '/v1/async/chat/completions' }],
    ['another method', { method: 'GET', path: '/v1/chat/completions' }],
    ['another query', { method: 'POST', path: '/v1/chat/completions?x=1' }],
    ['a gRPC method', { method: 'GRPC', path: '/gateway.billing.v1.BillingService/GetBalance' }],
  ])('refuses a token used for %s than it was minted for', (_what, binding) => {
    const token = new IdentitySigner(SECRET, 'edge').mint(CHAT, ID, 't');
    expect(refusal(() => new IdentityVerifier(SECRET).verify(token, binding))).toBe('identity_mismatch');
  });

  it('refuses a replayed token within its lifetime', () => {
    const c = clock();
    const verifier = new IdentityVerifier(SECRET, { now: c.now });
    const token = new IdentitySigner(SECRET, 'edge', c.now).mint(CHAT, ID, 't');
    verifier.verify(token, CHAT);
    c.advance(10_000);
    expect(refusal(() => verifier.verify(token, CHAT))).toBe('identity_replayed');
    c.advance(40_000);
    expect(refusal(() => verifier.verify(token, CHAT))).toBe('identity_expired');
  });

  it('a refused token does not use up its nonce', () => {
    const verifier = new IdentityVerifier(SECRET);
    const token = new IdentitySigner(SECRET, 'edge').mint(CHAT, ID, 't');
    expect(refusal(() => verifier.verify(token, { method: 'GET', path: '/v1/keys' }))).toBe('identity_mismatch');
    expect(verifier.verify(token, CHAT).identity).toEqual(ID);
  });

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => new IdentityVerifier('short')).toThrow(/32 bytes/);
    expect(() => new IdentitySigner('short', 'edge')).toThrow(/32 bytes/);
  });
});

describe('ReplayGuard', () => {
  it('forgets nonces once their tokens expire, so memory follows the traffic of one lifetime', () => {
    const guard = new ReplayGuard(1_000);
    for (let i = 0; i < 500; i++) expect(guard.remember(`n${i}`, 1_000 + i, 0)).toBe(true);
    expect(guard.size).toBe(500);
    expect(guard.remember('fresh', 5_000, 1_250)).toBe(true);
    expect(guard.size).toBe(250);
    expect(guard.remember('n499', 9_000, 1_250)).toBe(false);
  });

  it('never holds more than its bound: when full of live nonces it refuses (503) rather than forget one', () => {
    const guard = new ReplayGuard(3);
    for (const n of ['a', 'b', 'c']) guard.remember(n, 100, 0);
    let err: unknown;
    try {
      guard.remember('d', 100, 50);
    } catch (e) {
      err = e;
    }
    expect((err as GatewayError).status).toBe(503);
    expect(guard.size).toBe(3);
    expect(guard.remember('a', 100, 50)).toBe(false);
    expect(guard.remember('d', 200, 100)).toBe(true);
    expect(guard.size).toBe(1);
  });

  it('prunes an expired entry stuck behind a longer-lived one when the bound is reached', () => {
    const guard = new ReplayGuard(2);
    guard.remember('long', 1_000, 0);
    guard.remember('short', 10, 0);
    expect(guard.remember('next', 1_000, 20)).toBe(true);
    expect(guard.size).toBe(2);
  });
});
