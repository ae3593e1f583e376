import type { Catalog } from './schema';
import { applyFactorPpm, deploymentPrice, durationCostMicros, listCostMicros, PriceBook, tokenCostMicros, tokenCounts, type DeploymentPrice } from './pricing';

const price = (prompt: number, completion: number, perRequest = 0): DeploymentPrice => ({
  promptMicrosPerMillion: prompt,
  completionMicrosPerMillion: completion,
  perRequestMicros: perRequest,
  perImageMicros: 0,
  perAudioSecondMicros: 0,
  perVideoSecondMicros: 0,
});

describe('media quantities: images x per-image price, seconds in whole milliseconds rounded up', () => {
  it.each([
    // [seconds, micros per second, cost]
    [0, 100, 0],
    [1, 100, 100],
    [2.5, 100, 250],
    [0.0001, 100, 1], // 0.1 ms -> 1 ms -> 0.1 micro -> 1
    [1.2345, 1000, 1235], // 1234.5 ms -> 1235 ms
    [3.3, 3, 10], // 3300 ms x 3 / 1000 = 9.9 -> 10
  ])('%d s at %d micros/s = %d micros', (seconds, perSecond, expected) => {
    expect(durationCostMicros(seconds, perSecond)).toBe(expected);
  });

  it('an image call is billed per generated image, an audio call per second, beside its tokens', () => {
    const media = deploymentPrice({ prompt_per_million: '1', completion_per_million: '0', per_image: '0.04', per_audio_second: '0.0001', per_video_second: '0.1' });
    expect(listCostMicros(media, tokenCounts({ generated_images: 3 }))).toBe(120_000);
    expect(listCostMicros(media, tokenCounts({ audio_duration_seconds: 12.5 }))).toBe(1_250);
    expect(listCostMicros(media, tokenCounts({ video_duration_seconds: 4, prompt_tokens: 1_000_000 }))).toBe(1_400_000);
    const book = PriceBook.fromCatalog({
      providers: { p: { kind: 'openai-compatible', base_url: 'http://x', timeout_ms: 1 } },
      models: [{ deployments: [{ id: 'd1', provider: 'p', provider_model: 'm', weight: 1, price: { prompt_per_million: '0', completion_per_million: '0', per_image: '0.04' } }] }],
    } as unknown as Catalog);
    expect(book.worstCaseListMicros(['d1'], { promptTokens: 0, completionTokens: 0, images: 4 })).toBe(160_000);
    expect(book.quote('d1', { generated_images: 2 }, 500_000)).toEqual({ priced: true, listMicros: 80_000, chargedMicros: 40_000 });
  });
});

const MAX = Number.MAX_SAFE_INTEGER;

describe('tokenCostMicros: tokens x micros per million, any fraction of a micro rounded up', () => {
  it.each([
    // [tokens, micros per million tokens, cost]
    [0, 500_000, 0],
    [1_000_000, 500_000, 500_000],
    [1, 500_000, 1], // 0.5 micro -> 1
    [1, 1, 1], // 0.000001 micro -> 1
    [3, 333_333, 1], // 0.999999 -> 1
    [2, 500_000, 1], // exactly 1, no rounding
    [1_000_001, 1_000_000, 1_000_001],
    [150, 1_500_000, 225],
    [151, 1_500_000, 227], // 226.5 -> 227
    [10, 0, 0], // a free model costs nothing
    [MAX, 1_000_000, MAX], // the product passes 2^53 on the way; BigInt keeps it exact
    [MAX, 1, 9_007_199_255], // 9,007,199,254.740991 -> up
    [9_007_199_254, 1_000_000_000, 9_007_199_254_000], // $1000/M: a huge bill, still exact
  ])('%d tokens at %d micros/M = %d micros', (tokens, price, expected) => {
    expect(tokenCostMicros(tokens, price)).toBe(expected);
  });

  it('refuses a cost past the safe integers instead of rounding it', () => {
    expect(() => tokenCostMicros(MAX, 2_000_000)).toThrow(RangeError);
  });
});

describe('applyFactorPpm: list x price factor (ppm), rounded half up', () => {
  it.each([
    // [list micros, factor ppm, charged micros]
    [1_000_000, 1_000_000, 1_000_000], // factor 1.0 keeps the list price
    [1_000_000, 800_000, 800_000], // 20% off
    [0, 800_000, 0],
    [3, 500_000, 2], // 1.5 -> 2: a half rounds up
    [5, 500_000, 3], // 2.5 -> 3
    [1, 500_000, 1], // 0.5 -> 1
    [1, 499_999, 0], // 0.499999 -> 0
    [7, 300_000, 2], // 2.1 -> 2
    [7, 350_000, 2], // 2.45 -> 2
    [9, 950_000, 9], // 8.55 -> 9
    [100, 1_250_000, 125], // a markup
    [123_456_789, 1_250_000, 154_320_986], // 154,320,986.25 -> down
    [MAX, 1_000_000, MAX], // no float precision lost
  ])('%d micros x %d ppm = %d micros', (micros, factor, expected) => {
    expect(applyFactorPpm(micros, factor)).toBe(expected);
  });

  it('refuses a charge past the safe integers', () => {
    expect(() => applyFactorPpm(MAX, 1_000_001)).toThrow(RangeError);
  });
});

describe('deploymentPrice: the catalogue\'s USD strings in micros', () => {
  it.each([
    [{ prompt_per_million: '0.50', completion_per_million: '1.5' }, price(500_000, 1_500_000)],
    [{ prompt_per_million: '3', completion_per_million: '15', per_request: '0.002' }, price(3_000_000, 15_000_000, 2_000)],
    [{ prompt_per_million: '0.000001', completion_per_million: '0' }, price(1, 0)],
  ])('%j', (usd, micros) => {
    expect(deploymentPrice(usd)).toEqual(micros);
  });
});

describe('listCostMicros', () => {
  test.each([
    // [prompt tokens, completion tokens, price, expected micros]
    ['zero usage', 0, 0, price(500_000, 1_500_000), 0],
    ['one million each', 1_000_000, 1_000_000, price(500_000, 1_500_000), 2_000_000],
    ['exact micros', 10, 20, price(500_000, 1_500_000), 5 + 30],
    ['fractional micro rounds up per component', 1, 1, price(500_000, 1_500_000), 1 + 2],
    ['per-request fee added', 1000, 0, price(2_500_000, 10_000_000, 4_000), 2_500 + 4_000],
    ['only the fee', 0, 0, price(0, 0, 10_000), 10_000],
    ['large counts stay exact', 123_456_789, 987_654_321, price(150_000, 600_000), 18_518_519 + 592_592_593],
    ['per-request fee plus rounding', 1, 1, price(1, 1, 1), 3],
  ])('%s', (_name, promptTokens, completionTokens, p, expected) => {
    expect(listCostMicros(p, { promptTokens, completionTokens })).toBe(expected);
  });

  it('refuses a sum past the safe integers', () => {
    expect(() => listCostMicros(price(1_000_000, 1_000_000), { promptTokens: MAX, completionTokens: 1 })).toThrow(RangeError);
  });
});

describe('tokenCounts', () => {
  test.each([
    [{ prompt_tokens: 3, completion_tokens: 4 }, 3, 4],
    [{ input_tokens: 5, output_tokens: 6 }, 5, 6],
    [{ prompt_tokens: 1, input_tokens: 9, output_tokens: 2 }, 1, 2],
    [{}, 0, 0],
    [null, 0, 0],
  ])('%j -> %i prompt, %i completion', (usage, prompt, completion) => {
    expect(tokenCounts(usage)).toMatchObject({ promptTokens: prompt, completionTokens: completion });
  });
});

describe('PriceBook', () => {
  const catalog = {
    providers: { sim: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1', timeout_ms: 1000 } },
    models: [{
      id: 'm', deployments: [
        { id: 'dep-tokens', provider: 'sim', provider_model: 'x', weight: 1, price: { prompt_per_million: '0.50', completion_per_million: '1.50' } },
        { id: 'dep-fee', provider: 'sim', provider_model: 'y', weight: 1, price: { prompt_per_million: '3', completion_per_million: '15', per_request: '0.002' } },
        {
          id: 'dep-batch', provider: 'sim', provider_model: 'z', weight: 1, native_batch: true,
          price: { prompt_per_million: '0.50', completion_per_million: '1.50' },
          batch_price: { prompt_per_million: '0.25', completion_per_million: '0.75' },
        },
      ],
    }],
  } as unknown as Catalog;
  const book = PriceBook.fromCatalog(catalog);

  test.each([
    // [deployment, usage, factor ppm, list, charged]
    ['dep-tokens', { prompt_tokens: 1000, completion_tokens: 1000 }, 1_000_000, 2_000, 2_000],
    ['dep-tokens', { prompt_tokens: 1000, completion_tokens: 1000 }, 800_000, 2_000, 1_600],
    ['dep-fee', { input_tokens: 100, output_tokens: 10 }, 1_000_000, 300 + 150 + 2_000, 2_450],
    // 7 x 0.8 = 5.6 -> 6 (half up); 3 x 0.5 = 1.5 -> 2; 1 x 0.333333 = 0.33 -> 0
    ['dep-tokens', { prompt_tokens: 2, completion_tokens: 4 }, 800_000, 7, 6],
    ['dep-tokens', { prompt_tokens: 2, completion_tokens: 1 }, 500_000, 3, 2],
    ['dep-tokens', { prompt_tokens: 2, completion_tokens: 0 }, 333_333, 1, 0],
  ])('%s %j at factor %i ppm -> list %i, charged %i', (deployment, usage, factor, list, charged) => {
    expect(book.quote(deployment, usage, factor)).toEqual({ priced: true, listMicros: list, chargedMicros: charged });
  });

  test('worst case: the bounds priced at the dearest deployment the call may use; unpriced ones add nothing', () => {
    const bounds = { promptTokens: 1000, completionTokens: 100 };
    expect(book.worstCaseListMicros(['dep-tokens', 'dep-fee', 'nope'], bounds)).toBe(3_000 + 1_500 + 2_000);
    expect(book.worstCaseListMicros(['dep-tokens'], bounds)).toBe(500 + 150);
    expect(book.worstCaseListMicros(['nope'], bounds)).toBe(0);
  });

  test.each([
    // [deployment, tier, usage, factor ppm, list, charged]
    ['dep-batch', 'standard', { prompt_tokens: 1000, completion_tokens: 1000 }, 1_000_000, 2_000, 2_000],
    ['dep-batch', 'batch', { prompt_tokens: 1000, completion_tokens: 1000 }, 1_000_000, 1_000, 1_000],
    ['dep-batch', 'batch', { prompt_tokens: 1000, completion_tokens: 1000 }, 800_000, 1_000, 800],
    // 3 x 0.25 = 0.75 -> 1 and 1 x 0.75 = 0.75 -> 1: each component still rounds up at the batch price
    ['dep-batch', 'batch', { prompt_tokens: 3, completion_tokens: 1 }, 1_000_000, 2, 2],
    // No batch price: no native batch route, so a batch line there is an ordinary call at the list price.
    ['dep-tokens', 'batch', { prompt_tokens: 1000, completion_tokens: 1000 }, 1_000_000, 2_000, 2_000],
  ] as const)('%s at the %s tier, %j at factor %i ppm -> list %i, charged %i', (deployment, tier, usage, factor, list, charged) => {
    expect(book.quote(deployment, usage, factor, tier)).toEqual({ priced: true, listMicros: list, chargedMicros: charged });
  });

  test('worst case at the batch tier uses the batch prices', () => {
    const bounds = { promptTokens: 1000, completionTokens: 1000 };
    expect(book.worstCaseListMicros(['dep-batch'], bounds, 'batch')).toBe(1_000);
    expect(book.worstCaseListMicros(['dep-batch'], bounds)).toBe(2_000);
  });

  test('unknown deployment is unpriced at zero', () => {
    expect(book.quote('nope', { prompt_tokens: 10 }, 1_000_000)).toEqual({ priced: false, listMicros: 0, chargedMicros: 0 });
    expect(book.quote('nope', { prompt_tokens: 10 }, 1_000_000, 'batch')).toEqual({ priced: false, listMicros: 0, chargedMicros: 0 });
  });
});
