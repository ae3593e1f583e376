import { createHash } from 'node:crypto';
import { AuthenticationError, callUnary, type Identity } from '@gw/platform';
import type { AuthenticateResult, KeysServiceClient } from '@gw/proto';

interface CacheEntry {
  identity: Identity;
  expiresAt: number;
  /** Key expiry (ms) so a cached key still stops working on time. */
  keyExpiresAt: number;
}

/**
 * Bearer authentication through the keys service, cached by key hash so steady traffic makes no gRPC call.
 * Entries expire after a short TTL and are dropped at once when a key-change event names them. Failures
 * are not cached, so a key that starts working is usable immediately.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<Identity>>();
  /** Bumped by every invalidation: a lookup that straddles one must not cache (or share) what it read before. */
  private epoch = 0;

  constructor(private readonly keys: KeysServiceClient, private readonly ttlMs: number) {}

  async authenticate(secret: string, traceId: string): Promise<Identity> {
    const hash = createHash('sha256').update(secret).digest('hex');
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > now && (hit.keyExpiresAt === 0 || hit.keyExpiresAt > now)) return hit.identity;
    // Concurrent first requests with one key share a single lookup.
    let pending = this.inflight.get(hash);
    if (!pending) {
      const started: Promise<Identity> = this.lookup(secret, hash, traceId).finally(() => {
        if (this.inflight.get(hash) === started) this.inflight.delete(hash);
      });
      pending = started;
      this.inflight.set(hash, pending);
    }
    return pending;
  }

  invalidate(keyHash: string): void {
    this.epoch++;
    this.cache.delete(keyHash);
    this.inflight.delete(keyHash);
  }

  private async lookup(secret: string, hash: string, traceId: string): Promise<Identity> {
    const epoch = this.epoch;
    const res = await callUnary<{ secret: string }, AuthenticateResult>(this.keys, this.keys.Authenticate, { secret }, { deadlineMs: 2000, traceId });
    const identity: Identity = {
      accountId: res.account_id,
      keyHash: res.key_hash,
      isManagement: res.is_management,
      keyLimitMicros: res.has_limit ? res.limit_micros : null,
      keyLimitReset: res.limit_reset === 'daily' || res.limit_reset === 'weekly' || res.limit_reset === 'monthly' ? res.limit_reset : null,
    };
    if (this.ttlMs > 0 && epoch === this.epoch) this.cache.set(hash, { identity, expiresAt: Date.now() + this.ttlMs, keyExpiresAt: res.expires_at_ms });
    return identity;
  }
}

/** `Authorization: Bearer <key>`, or `x-api-key` where the route allows it (messages-style clients). */
export function extractSecret(headers: Record<string, string | string[] | undefined>, allowXApiKey: boolean): string {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
    throw new AuthenticationError('Authorization header must be "Bearer <API key>"');
  }
  const xKey = headers['x-api-key'];
  if (allowXApiKey && typeof xKey === 'string' && xKey.trim()) return xKey.trim();
  throw new AuthenticationError('Missing API key: send "Authorization: Bearer <API key>"', 'missing_api_key');
}
