import { tokenCounts, type PriceBook } from '@gw/catalog';
import { callUnary } from '@gw/platform';
import type { Balance__Output, BillingServiceClient } from '@gw/proto';
import type { Usage } from '@gw/provider-spec';
import type { CallCost, CallUsage } from './recorded-calls';

/**
 * A call's cost as billing will post it: billing's price function (the catalogue's PriceBook) on the reported
 * usage at the deployment that served it, times the account's price factor read from billing.
 */
export class CallPricing {
  constructor(private readonly priceBook: PriceBook, private readonly billing: BillingServiceClient) {}

  async priceFactorPpm(accountId: string, traceId: string): Promise<number> {
    const balance = await callUnary<{ account_id: string }, Balance__Output>(this.billing, this.billing.GetBalance, { account_id: accountId }, { traceId });
    return balance.price_factor_ppm;
  }

  cost(deployment: string, usage: Usage, priceFactorPpm: number): CallCost {
    const quote = this.priceBook.quote(deployment, usage, priceFactorPpm);
    return { priced: quote.priced, list_micros: quote.listMicros, charged_micros: quote.chargedMicros };
  }
}

export function callUsage(usage: Usage): CallUsage {
  const { promptTokens, completionTokens } = tokenCounts(usage);
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: usage.total_tokens ?? promptTokens + completionTokens };
}
