import { hash as digestOf } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { keysProto, type AuthenticateResult, type KeysServiceClient } from '@gw/proto';
import { callUnary, grpcClientOptions } from './grpc';
import type { ApiKeyAccounts } from './grpc-auth';
import type { Identity } from './identity';

interface Entry {
  identity: Identity;
  until: number;
}

/**
 * The identity of an API key a gRPC caller presents, from keys' `Authenticate` (the same check the edge makes:
 * unknown, disabled and expired keys are refused), cached briefly by key hash so a busy caller costs one
 * lookup per few seconds. Refusals are not cached.
 */
export class KeysApiKeyAccounts implements ApiKeyAccounts {
  private readonly client: KeysServiceClient;
  private readonly cache = new Map<string, Entry>();

  constructor(address: string, private readonly ttlMs = 5_000, private readonly maxEntries = 10_000) {
    this.client = new keysProto.gateway.keys.v1.KeysService(address, grpc.credentials.createInsecure(), grpcClientOptions);
  }

  async identityOf(secret: string, traceId?: string): Promise<Identity> {
    const hash = digestOf('sha256', secret);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) return hit.identity;
    const res = await callUnary<{ secret: string }, AuthenticateResult>(this.client, this.client.Authenticate, { secret }, { traceId });
    const identity: Identity = {
      accountId: res.account_id,
      keyHash: res.key_hash,
      isManagement: res.is_management,
      keyLimitMicros: res.has_limit ? res.limit_micros : null,
      keyLimitReset: res.limit_reset === 'daily' || res.limit_reset === 'weekly' || res.limit_reset === 'monthly' ? res.limit_reset : null,
    };
    // A key that expires sooner than the cache entry stops working on time.
    const until = Math.min(now + this.ttlMs, res.expires_at_ms > 0 ? res.expires_at_ms : Infinity);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(hash, { identity, until });
    return identity;
  }

  close(): void {
    this.client.close();
  }
}
