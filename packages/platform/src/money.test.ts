import { applyFactorPpm, microsToUsd, tokenCostMicros, usdToMicros } from './money';

describe('microsToUsd / usdToMicros', () => {
  it.each([
    [0, '0.000000'],
    [1, '0.000001'],
    [-5, '-0.000005'],
    [999_999, '0.999999'],
    [1_000_000, '1.000000'],
    [12_345_678, '12.345678'],
    [-12_345_678, '-12.345678'],
    [Number.MAX_SAFE_INTEGER, '9007199254.740991'],
  ])('%d micros <-> "%s" round trips exactly', (micros, usd) => {
    expect(microsToUsd(micros)).toBe(usd);
    expect(usdToMicros(usd)).toBe(micros);
  });

  it.each([
    ['1', 1_000_000],
    ['0.5', 500_000],
    ['0.000001', 1],
    ['100', 100_000_000],
    [' 2.25 ', 2_250_000],
    ['-0.5', -500_000],
    [0.1, 100_000],
    [0.8, 800_000],
    [12.345678, 12_345_678],
    [3, 3_000_000],
  ])('parses %p as %d micros', (value, micros) => {
    expect(usdToMicros(value)).toBe(micros);
  });

  it.each([
    ['more than 6 decimals (string)', '0.1234567'],
    ['more than 6 decimals (number)', 0.1234567],
    ['a number whose 7th+ decimals are not zero', 1.0000000001],
    ['a number too small to be a micro', 1e-8],
    ['exponent notation (string)', '1e3'],
    ['exponent notation with a fraction', '1.5e-3'],
    ['exponent notation (huge number)', 1e21],
    ['an empty string', ''],
    ['blank', '   '],
    ['words', 'ten dollars'],
    ['a currency sign', '$1.00'],
    ['a thousands separator', '1,000'],
    ['a decimal comma', '1,5'],
    ['hex', '0x10'],
    ['a leading plus', '+1'],
    ['a bare dot', '.5'],
    ['a trailing dot', '1.'],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['an amount beyond 2^53 micros', '9007199254.740992'],
  ])('refuses %s (%p)', (_what, value) => {
    expect(() => usdToMicros(value)).toThrow(RangeError);
  });

  it.each([[1.5], [Number.NaN], [2 ** 53]])('microsToUsd refuses the non-integer or unsafe amount %p', (micros) => {
    expect(() => microsToUsd(micros)).toThrow(RangeError);
  });
});

describe('applyFactorPpm', () => {
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
    [123_456_789, 1_250_000, 154_320_986], // 154,320,986.25 -> down
    [Number.MAX_SAFE_INTEGER, 1_000_000, Number.MAX_SAFE_INTEGER], // no float precision lost
  ])('%d micros x %d ppm = %d micros', (micros, factor, expected) => {
    expect(applyFactorPpm(micros, factor)).toBe(expected);
  });
});

describe('tokenCostMicros', () => {
  it.each([
    // [tokens, micros per million tokens, cost]
    [0, 500_000, 0],
    [1_000_000, 500_000, 500_000],
    [1, 500_000, 1], // 0.5 micro -> 1: any fraction of a micro is charged
    [1, 1, 1], // 0.000001 micro -> 1
    [3, 333_333, 1], // 0.999999 -> 1
    [2, 500_000, 1], // exactly 1, no rounding
    [1_000_001, 1_000_000, 1_000_001],
    [150, 1_500_000, 225],
    [151, 1_500_000, 227], // 226.5 -> 227
    [10, 0, 0], // a free model costs nothing
  ])('%d tokens at %d micros/M = %d micros', (tokens, price, expected) => {
    expect(tokenCostMicros(tokens, price)).toBe(expected);
  });
});
