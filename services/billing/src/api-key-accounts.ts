import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { callUnary, grpcClientOptions, type ApiKeyAccounts } from '@gw/platform';
import { keysProto, type AuthenticateResult, type KeysServiceClient } from '@gw/proto';

interface Entry {
  accountId: string;
  until: number;
}

/**
 * The account of an API key a gRPC caller presents, from keys' `Authenticate` (the same check the edge makes),
 * cached briefly by key hash so a busy caller costs one lookup per few seconds. Refusals are not cached.
 */
export class KeysApiKeyAccounts implements ApiKeyAccounts {
  private readonly client: KeysServiceClient;
  private readonly cache = new Map<string, Entry>();

  constructor(address: string, private readonly ttlMs = 5_000, private readonly maxEntries = 10_000) {
    this.client = new keysProto.gateway.keys.v1.KeysService(address, grpc.credentials.createInsecure(), grpcClientOptions);
  }

  async accountOf(secret: string, traceId?: string): Promise<string> {
    const hash = createHash('sha256').update(secret).digest('hex');
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) return hit.accountId;
    const res = await callUnary<{ secret: string }, AuthenticateResult>(this.client, this.client.Authenticate, { secret }, { traceId });
    // A key that expires sooner than the cache entry stops working on time.
    const until = Math.min(now + this.ttlMs, res.expires_at_ms > 0 ? res.expires_at_ms : Infinity);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(hash, { accountId: res.account_id, until });
    return res.account_id;
  }

  close(): void {
    this.client.close();
  }
}
