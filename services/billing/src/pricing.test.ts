import type { Catalog } from '@gw/catalog';
import { listCostMicros, PriceBook, tokenCounts, type DeploymentPrice } from './pricing';

const price = (prompt: number, completion: number, perRequest = 0): DeploymentPrice => ({
  promptMicrosPerMillion: prompt,
  completionMicrosPerMillion: completion,
  perRequestMicros: perRequest,
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
  ])('%s', (_name, promptTokens, completionTokens, p, expected) => {
    expect(listCostMicros(p, { promptTokens, completionTokens })).toBe(expected);
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
    expect(tokenCounts(usage)).toEqual({ promptTokens: prompt, completionTokens: completion });
  });
});

describe('PriceBook', () => {
  const catalog = {
    providers: { sim: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1', timeout_ms: 1000 } },
    models: [{
      id: 'm', deployments: [
        { id: 'dep-tokens', provider: 'sim', provider_model: 'x', weight: 1, price: { prompt_per_million: '0.50', completion_per_million: '1.50' } },
        { id: 'dep-fee', provider: 'sim', provider_model: 'y', weight: 1, price: { prompt_per_million: '3', completion_per_million: '15', per_request: '0.002' } },
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

  test('unknown deployment is unpriced at zero', () => {
    expect(book.quote('nope', { prompt_tokens: 10 }, 1_000_000)).toEqual({ priced: false, listMicros: 0, chargedMicros: 0 });
  });
});
