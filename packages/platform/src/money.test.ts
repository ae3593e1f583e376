import { microsToUsd, usdToMicros } from './money';

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
