import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { randomText } from './ids';
import { z } from 'zod';
import { AuthenticationError, UnavailableError } from './errors';
import type { Identity } from './identity';

/**
 * Signed identity tokens: the only way identity travels between the services. The edge mints one per
 * forwarded request (and a service per internal gRPC call) with the platform secret; a service believes an
 * identity only when the MAC checks out, the token is fresh, it is bound to this very request (method and
 * path with query) and its nonce was not seen before. Format: `v1.<base64url(JSON claims)>.<base64url(HMAC-SHA256)>`.
 */
export const IDENTITY_HEADER = 'x-gw-identity';
/** The binding method of a token for a gRPC call; its path is the gRPC method path (`/package.Service/Method`). */
export const GRPC_BINDING_METHOD = 'GRPC';
/** Lifetime of a token: it is checked on arrival, milliseconds after it was minted. */
export const IDENTITY_TOKEN_TTL_MS = 30_000;
/** Clock difference between hosts tolerated on `issuedAt` and `expiresAt`. */
export const IDENTITY_CLOCK_SKEW_MS = 5_000;
/** The secret must carry at least this many bytes (256 bits, the HMAC-SHA256 block it keys). */
export const IDENTITY_SECRET_MIN_BYTES = 32;

const VERSION = 'v1';
const MAC_BYTES = 32;

export interface RequestBinding {
  /** HTTP method, or GRPC_BINDING_METHOD. */
  method: string;
  /** Path with query exactly as sent, or the gRPC method path. */
  path: string;
}

export interface IdentityClaims extends RequestBinding {
  /** The authenticated key; null for an anonymous route or a platform service's own call. */
  identity: Identity | null;
  traceId: string;
  /** Who minted it: `edge` or the calling service. */
  issuer: string;
  nonce: string;
  issuedAt: number;
  expiresAt: number;
}

const identitySchema = z.object({
  accountId: z.string().min(1),
  keyHash: z.string().min(1),
  isManagement: z.boolean(),
  keyLimitMicros: z.number().int().min(0).nullable(),
  keyLimitReset: z.enum(['daily', 'weekly', 'monthly']).nullable(),
});

const claimsSchema = z.object({
  identity: identitySchema.nullable(),
  traceId: z.string(),
  issuer: z.string().min(1),
  nonce: z.string().min(16).max(64),
  issuedAt: z.number().int(),
  expiresAt: z.number().int(),
  method: z.string().min(1),
  path: z.string().min(1),
});

/** Imported once as a key object: HMAC with raw bytes would import the key again on every call. */
function secretKey(secret: string): KeyObject {
  const key = Buffer.from(secret, 'utf8');
  if (key.length < IDENTITY_SECRET_MIN_BYTES) throw new Error(`The identity secret must be at least ${IDENTITY_SECRET_MIN_BYTES} bytes`);
  return createSecretKey(key);
}

const mac = (key: KeyObject, signed: string) => createHmac('sha256', key).update(signed).digest();

/** Mints tokens; one per process role (the edge, or a service calling another). */
export class IdentitySigner {
  private readonly key: KeyObject;

  constructor(secret: string, private readonly issuer: string, private readonly now: () => number = Date.now, private readonly ttlMs = IDENTITY_TOKEN_TTL_MS) {
    this.key = secretKey(secret);
  }

  mint(binding: RequestBinding, identity: Identity | null, traceId: string): string {
    const issuedAt = this.now();
    const claims: IdentityClaims = {
      identity, traceId, issuer: this.issuer, nonce: randomText(16, 'base64url'),
      issuedAt, expiresAt: issuedAt + this.ttlMs, method: binding.method, path: binding.path,
    };
    const body = `${VERSION}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${body}.${mac(this.key, body).toString('base64url')}`;
  }
}

/**
 * Nonces of accepted tokens until they expire, so a captured token works once per verifier. Memory is bounded:
 * entries leave when their token expires, and when the window is full new tokens are refused (503) rather
 * than an unexpired nonce forgotten, which would reopen it to replay.
 */
export class ReplayGuard {
  /** nonce -> expiresAt, in insertion order (close to expiry order: every token lives as long). */
  private readonly seen = new Map<string, number>();

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.seen.size;
  }

  /** Records the nonce; false when it was already recorded and has not expired. */
  remember(nonce: string, expiresAt: number, now: number): boolean {
    this.pruneFront(now);
    const known = this.seen.get(nonce);
    if (known !== undefined && known > now) return false;
    if (this.seen.size >= this.maxEntries) {
      this.pruneAll(now);
      if (this.seen.size >= this.maxEntries) throw new UnavailableError('Too many requests in the identity replay window', 'replay_window_full');
    }
    this.seen.set(nonce, expiresAt);
    return true;
  }

  private pruneFront(now: number): void {
    for (const [nonce, expiresAt] of this.seen) {
      if (expiresAt > now) return;
      this.seen.delete(nonce);
    }
  }

  private pruneAll(now: number): void {
    for (const [nonce, expiresAt] of this.seen) if (expiresAt <= now) this.seen.delete(nonce);
  }
}

export interface IdentityVerifierOptions {
  now?: () => number;
  ttlMs?: number;
  skewMs?: number;
  /** Most nonces remembered at once (the replay window's memory bound). */
  maxReplayEntries?: number;
}

/** Checks tokens; one per service instance (its replay memory is per instance). */
export class IdentityVerifier {
  private readonly key: KeyObject;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly skewMs: number;
  private readonly replays: ReplayGuard;

  constructor(secret: string, opts: IdentityVerifierOptions = {}) {
    this.key = secretKey(secret);
    this.now = opts.now ?? Date.now;
    this.ttlMs = opts.ttlMs ?? IDENTITY_TOKEN_TTL_MS;
    this.skewMs = opts.skewMs ?? IDENTITY_CLOCK_SKEW_MS;
    this.replays = new ReplayGuard(opts.maxReplayEntries ?? 250_000);
  }

  /** The claims of a genuine, fresh, unreplayed token bound to `binding`; AuthenticationError otherwise. */
  verify(token: string | undefined, binding: RequestBinding): IdentityClaims {
    if (!token) throw new AuthenticationError('Missing platform identity: call the gateway through its edge', 'identity_missing');
    const claims = this.authentic(token);
    const now = this.now();
    if (claims.expiresAt <= now - this.skewMs || claims.issuedAt > now + this.skewMs || claims.expiresAt - claims.issuedAt > this.ttlMs) {
      throw new AuthenticationError('Platform identity expired', 'identity_expired');
    }
    if (claims.method !== binding.method || claims.path !== binding.path) {
      throw new AuthenticationError('Platform identity was issued for another request', 'identity_mismatch');
    }
    if (!this.replays.remember(claims.nonce, claims.expiresAt + this.skewMs, now)) {
      throw new AuthenticationError('Platform identity was already used', 'identity_replayed');
    }
    return claims;
  }

  /** Format and MAC (compared in constant time), then the claims' shape. */
  private authentic(token: string): IdentityClaims {
    const parts = token.split('.');
    const invalid = () => new AuthenticationError('Invalid platform identity', 'identity_invalid');
    if (parts.length !== 3 || parts[0] !== VERSION) throw invalid();
    const given = Buffer.from(parts[2], 'base64url');
    if (given.length !== MAC_BYTES) throw invalid();
    if (!timingSafeEqual(given, mac(this.key, `${parts[0]}.${parts[1]}`))) throw invalid();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      throw invalid();
    }
    const parsed = claimsSchema.safeParse(decoded);
    if (!parsed.success) throw invalid();
    return parsed.data;
  }
}
