import * as grpc from '@grpc/grpc-js';
import { callUnary, grpcClientOptions, IdentitySigner, serviceIdentityInterceptor, type Logger } from '@gw/platform';
import { billingProto, type BillingServiceClient } from '@gw/proto';

export interface LineCharge {
  request_id: string;
  list_micros: number;
  charged_micros: number;
}

/** Billing's record of charges, for the lines of a batch. */
export interface ChargeLookup {
  /** The applied charges among `requestIds` (at most 1,000); ids not billed yet are left out. */
  charges(accountId: string, requestIds: string[]): Promise<LineCharge[]>;
}

/** Billing's `GetRequestCharges` over gRPC, with the batch service's signed identity. */
export class BillingCharges implements ChargeLookup {
  private readonly client: BillingServiceClient;

  constructor(address: string, secret: string) {
    this.client = new billingProto.gateway.billing.v1.BillingService(address, grpc.credentials.createInsecure(),
      { ...grpcClientOptions, interceptors: [serviceIdentityInterceptor(new IdentitySigner(secret, 'batch'))] }) as BillingServiceClient;
  }

  async charges(accountId: string, requestIds: string[]): Promise<LineCharge[]> {
    const res = await callUnary<{ account_id: string; request_ids: string[] }, { charges: LineCharge[] }>(
      this.client, this.client.GetRequestCharges, { account_id: accountId, request_ids: requestIds });
    return res.charges;
  }

  close(): void {
    this.client.close();
  }
}

const LOOKUP_PAGE = 1_000;

export interface BilledTotals {
  listMicros: number;
  chargedMicros: number;
  billed: number;
}

/**
 * Sums the charges of `requestIds`, waiting (up to `waitMs`) until billing has applied every one of them:
 * usage reaches billing through the bus, moments after each answer. Returns what was billed by then.
 */
export async function billedTotals(lookup: ChargeLookup, accountId: string, requestIds: string[], opts: { waitMs: number; pollMs: number; logger: Logger; signal: AbortSignal }): Promise<BilledTotals> {
  const found = new Map<string, LineCharge>();
  const deadline = Date.now() + opts.waitMs;
  for (;;) {
    const missing = requestIds.filter((id) => !found.has(id));
    for (let i = 0; i < missing.length; i += LOOKUP_PAGE) {
      for (const c of await lookup.charges(accountId, missing.slice(i, i + LOOKUP_PAGE))) found.set(c.request_id, c);
    }
    if (found.size === requestIds.length || Date.now() > deadline || opts.signal.aborted) break;
    await new Promise((r) => setTimeout(r, opts.pollMs));
  }
  if (opts.signal.aborted) throw opts.signal.reason;
  if (found.size < requestIds.length) {
    opts.logger.warn({ billed: found.size, answered: requestIds.length }, 'billing had not applied every answered line by the deadline; usage_billing shows what it had');
  }
  let listMicros = 0;
  let chargedMicros = 0;
  for (const c of found.values()) {
    listMicros += c.list_micros;
    chargedMicros += c.charged_micros;
  }
  return { listMicros, chargedMicros, billed: found.size };
}
