import { applyFactorPpm, tokenCostMicros, usdToMicros } from '@gw/platform';
import { deploymentsById, type Catalog } from '@gw/catalog';

/** A deployment's price in integer micros, parsed once from the catalogue's USD strings. */
export interface DeploymentPrice {
  promptMicrosPerMillion: number;
  completionMicrosPerMillion: number;
  perRequestMicros: number;
}

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
}

export interface UsageTokens {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  input_tokens?: number | null;
  output_tokens?: number | null;
}

export type PriceQuote =
  | { priced: true; listMicros: number; chargedMicros: number }
  | { priced: false; listMicros: 0; chargedMicros: 0 };

/** Providers name tokens either prompt/completion or input/output; the former wins when both are present. */
export function tokenCounts(usage: UsageTokens | null | undefined): TokenCounts {
  return {
    promptTokens: usage?.prompt_tokens ?? usage?.input_tokens ?? 0,
    completionTokens: usage?.completion_tokens ?? usage?.output_tokens ?? 0,
  };
}

/** List cost: each token component rounded up to a whole micro, plus the flat per-call fee. */
export function listCostMicros(price: DeploymentPrice, tokens: TokenCounts): number {
  return (
    tokenCostMicros(tokens.promptTokens, price.promptMicrosPerMillion) +
    tokenCostMicros(tokens.completionTokens, price.completionMicrosPerMillion) +
    price.perRequestMicros
  );
}

export class PriceBook {
  constructor(private readonly prices: ReadonlyMap<string, DeploymentPrice>) {}

  static fromCatalog(catalog: Catalog): PriceBook {
    const prices = new Map<string, DeploymentPrice>();
    for (const [id, d] of deploymentsById(catalog)) {
      prices.set(id, {
        promptMicrosPerMillion: usdToMicros(d.price.prompt_per_million),
        completionMicrosPerMillion: usdToMicros(d.price.completion_per_million),
        perRequestMicros: d.price.per_request ? usdToMicros(d.price.per_request) : 0,
      });
    }
    return new PriceBook(prices);
  }

  priceOf(deployment: string): DeploymentPrice | undefined {
    return this.prices.get(deployment);
  }

  /**
   * The most a call may cost at list price: its token bounds priced at the most expensive of the deployments
   * it may be served by. A deployment without a price is billed nothing, so it adds nothing here either.
   */
  worstCaseListMicros(deployments: readonly string[], bounds: TokenCounts): number {
    let worst = 0;
    for (const id of deployments) {
      const price = this.prices.get(id);
      if (price) worst = Math.max(worst, listCostMicros(price, bounds));
    }
    return worst;
  }

  /** Charged = list x the account's price factor; an unknown deployment is reported unpriced, never guessed. */
  quote(deployment: string, usage: UsageTokens | null | undefined, priceFactorPpm: number): PriceQuote {
    const price = this.prices.get(deployment);
    if (!price) return { priced: false, listMicros: 0, chargedMicros: 0 };
    const listMicros = listCostMicros(price, tokenCounts(usage));
    return { priced: true, listMicros, chargedMicros: applyFactorPpm(listMicros, priceFactorPpm) };
  }
}
