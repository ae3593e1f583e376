import * as grpc from '@grpc/grpc-js';
import { callUnary, grpcClientOptions, serviceIdentityInterceptor, UnavailableError, type IdentitySigner } from '@gw/platform';
import { billingProto, type BillingServiceClient, type KeyUsage__Output } from '@gw/proto';

/** Spend of one key in micros: in total and in the current day, week and month. */
export interface KeyUsageMicros {
  total: number;
  daily: number;
  weekly: number;
  monthly: number;
}

export const NO_USAGE: KeyUsageMicros = Object.freeze({ total: 0, daily: 0, weekly: 0, monthly: 0 });

/** Where key spend comes from (billing owns it). Fails with a 503 rather than guessing. */
export interface KeyUsageSource {
  usageOf(keyHashes: string[], traceId?: string): Promise<Map<string, KeyUsageMicros>>;
  close(): void;
}

/** Reads key spend from billing's `GetKeyUsage` over gRPC, as the keys service (a signed service identity). */
export class BillingKeyUsage implements KeyUsageSource {
  private readonly client: BillingServiceClient;

  constructor(address: string, signer: IdentitySigner, private readonly deadlineMs = 2000) {
    this.client = new billingProto.gateway.billing.v1.BillingService(address, grpc.credentials.createInsecure(),
      { ...grpcClientOptions, interceptors: [serviceIdentityInterceptor(signer)] });
  }

  async usageOf(keyHashes: string[], traceId?: string): Promise<Map<string, KeyUsageMicros>> {
    const usage = new Map<string, KeyUsageMicros>();
    if (keyHashes.length === 0) return usage;
    let res: { usage: KeyUsage__Output[] };
    try {
      res = await callUnary<{ key_hashes: string[] }, { usage: KeyUsage__Output[] }>(this.client, this.client.GetKeyUsage, { key_hashes: keyHashes }, { deadlineMs: this.deadlineMs, traceId });
    } catch (err) {
      // Whatever billing answered, the caller cannot fix it and must not see invented numbers. The cause
      // (internal addresses included) goes to the log, not to the caller.
      throw Object.assign(new UnavailableError('Key usage is unavailable right now; try again shortly', 'usage_unavailable'), { cause: err });
    }
    for (const u of res.usage) {
      usage.set(u.key_hash, { total: u.total_micros, daily: u.daily_micros, weekly: u.weekly_micros, monthly: u.monthly_micros });
    }
    return usage;
  }

  close(): void {
    this.client.close();
  }
}
