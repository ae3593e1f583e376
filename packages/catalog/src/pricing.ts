import { usdToMicros } from '@gw/platform';
import type { Catalog, Price } from './schema';
import { deploymentsById } from './load-catalog';

/**
 * The one price function of the gateway: what a call costs at the deployment that served it. Everything is
 * integer micro-dollars, computed with BigInt so no float touches an amount. The rounding rule:
 *   list    = ceil(prompt tokens x prompt price / 1M) + ceil(completion tokens x completion price / 1M) + per-request fee
 *             + images x per-image price + ceil(audio ms x per-second price / 1000) + ceil(video ms x per-second price / 1000)
 *             (each token and duration component rounded UP to a whole micro: any fraction of a micro is charged;
 *             durations count in whole milliseconds, rounded up)
 *   charged = list x the account's price factor (parts per million), rounded HALF UP to a whole micro.
 * A result past Number.MAX_SAFE_INTEGER is refused (RangeError), never rounded.
 * The price is the deployment's `price`, or for a line run through the provider's batch API (tier `batch`)
 * its `batch_price`; a deployment without a batch price has no native batch route (the catalogue loader
 * insists), so a batch line there is an ordinary call at the list price.
 */

/** A deployment's price in integer micros, parsed once from the catalogue's USD strings. */
export interface DeploymentPrice {
  promptMicrosPerMillion: number;
  completionMicrosPerMillion: number;
  perRequestMicros: number;
  perImageMicros: number;
  perAudioSecondMicros: number;
  perVideoSecondMicros: number;
}

/** The billable quantities of a call (or its upper bounds): tokens, and for media calls images and seconds. */
export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
  images?: number;
  audioSeconds?: number;
  videoSeconds?: number;
}

export interface UsageTokens {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  input_tokens?: number | null;
  output_tokens?: number | null;
  generated_images?: number | null;
  audio_duration_seconds?: number | null;
  video_duration_seconds?: number | null;
}

/** Which of a deployment's prices applies: its list price, or its provider batch price. */
export type PriceTier = 'standard' | 'batch';

interface DeploymentPrices {
  standard: DeploymentPrice;
  batch?: DeploymentPrice;
}

export type PriceQuote =
  | { priced: true; listMicros: number; chargedMicros: number }
  | { priced: false; listMicros: 0; chargedMicros: 0 };

const MILLION = 1_000_000n;

function safeMicros(amount: bigint): number {
  const n = Number(amount);
  if (!Number.isSafeInteger(n)) throw new RangeError(`amount out of range: ${amount} micros`);
  return n;
}

/** Cost of `seconds` at a price in micros per second, counted in whole milliseconds (rounded up), the cost rounded up to a whole micro. */
export function durationCostMicros(seconds: number, microsPerSecond: number): number {
  const ms = BigInt(Math.ceil(seconds * 1000 - 1e-9));
  return safeMicros((ms * BigInt(microsPerSecond) + 999n) / 1000n);
}

/** Cost of `tokens` at a price in micros per million tokens, rounded up to a whole micro. */
export function tokenCostMicros(tokens: number, microsPerMillionTokens: number): number {
  return safeMicros((BigInt(tokens) * BigInt(microsPerMillionTokens) + MILLION - 1n) / MILLION);
}

/** `micros x factor`, the factor in parts per million (1,000,000 = 1.0), rounded half up to a whole micro. */
export function applyFactorPpm(micros: number, factorPpm: number): number {
  const product = BigInt(micros) * BigInt(factorPpm);
  const q = product / MILLION;
  return safeMicros((product % MILLION) * 2n >= MILLION ? q + 1n : q);
}

/** The catalogue's USD price of a deployment, in micros. */
export function deploymentPrice(price: Price): DeploymentPrice {
  return {
    promptMicrosPerMillion: usdToMicros(price.prompt_per_million),
    completionMicrosPerMillion: usdToMicros(price.completion_per_million),
    perRequestMicros: price.per_request ? usdToMicros(price.per_request) : 0,
    perImageMicros: price.per_image ? usdToMicros(price.per_image) : 0,
    perAudioSecondMicros: price.per_audio_second ? usdToMicros(price.per_audio_second) : 0,
    perVideoSecondMicros: price.per_video_second ? usdToMicros(price.per_video_second) : 0,
  };
}

/** Providers name tokens either prompt/completion or input/output; the former wins when both are present. */
export function tokenCounts(usage: UsageTokens | null | undefined): TokenCounts {
  return {
    promptTokens: usage?.prompt_tokens ?? usage?.input_tokens ?? 0,
    completionTokens: usage?.completion_tokens ?? usage?.output_tokens ?? 0,
    images: usage?.generated_images ?? 0,
    audioSeconds: usage?.audio_duration_seconds ?? 0,
    videoSeconds: usage?.video_duration_seconds ?? 0,
  };
}

/** List cost: each token and duration component rounded up to a whole micro, plus images and the flat per-call fee. */
export function listCostMicros(price: DeploymentPrice, tokens: TokenCounts): number {
  return safeMicros(
    BigInt(tokenCostMicros(tokens.promptTokens, price.promptMicrosPerMillion)) +
    BigInt(tokenCostMicros(tokens.completionTokens, price.completionMicrosPerMillion)) +
    BigInt(price.perRequestMicros) +
    BigInt(tokens.images ?? 0) * BigInt(price.perImageMicros) +
    BigInt(durationCostMicros(tokens.audioSeconds ?? 0, price.perAudioSecondMicros)) +
    BigInt(durationCostMicros(tokens.videoSeconds ?? 0, price.perVideoSecondMicros)),
  );
}

/** Every deployment's price, keyed by deployment id: billing charges usage and holds spend with it. */
export class PriceBook {
  constructor(private readonly prices: ReadonlyMap<string, DeploymentPrices>) {}

  static fromCatalog(catalog: Catalog): PriceBook {
    const prices = new Map<string, DeploymentPrices>();
    for (const [id, d] of deploymentsById(catalog)) {
      prices.set(id, { standard: deploymentPrice(d.price), ...(d.batch_price ? { batch: deploymentPrice(d.batch_price) } : {}) });
    }
    return new PriceBook(prices);
  }

  priceOf(deployment: string, tier: PriceTier = 'standard'): DeploymentPrice | undefined {
    const prices = this.prices.get(deployment);
    return tier === 'batch' ? prices?.batch ?? prices?.standard : prices?.standard;
  }

  /**
   * The most a call may cost at list price: its token bounds priced at the most expensive of the deployments
   * it may be served by. A deployment without a price is billed nothing, so it adds nothing here either.
   */
  worstCaseListMicros(deployments: readonly string[], bounds: TokenCounts, tier: PriceTier = 'standard'): number {
    let worst = 0;
    for (const id of deployments) {
      const price = this.priceOf(id, tier);
      if (price) worst = Math.max(worst, listCostMicros(price, bounds));
    }
    return worst;
  }

  /** Charged = list x the account's price factor; an unknown deployment is reported unpriced, never guessed. */
  quote(deployment: string, usage: UsageTokens | null | undefined, priceFactorPpm: number, tier: PriceTier = 'standard'): PriceQuote {
    const price = this.priceOf(deployment, tier);
    if (!price) return { priced: false, listMicros: 0, chargedMicros: 0 };
    const listMicros = listCostMicros(price, tokenCounts(usage));
    return { priced: true, listMicros, chargedMicros: applyFactorPpm(listMicros, priceFactorPpm) };
  }
}
