import { retryAfterSeconds } from './retry-after';

describe('retryAfterSeconds', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['no header', {}, undefined],
    ['delta seconds', { 'retry-after': '20' }, 20],
    ['fractional seconds round up', { 'retry-after': '0.2' }, 1],
    ['HTTP date', { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, 30],
    ['HTTP date in the past', { 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, 0],
    ['retry-after-ms wins', { 'retry-after-ms': '1500', 'retry-after': '20' }, 2],
    ['garbage', { 'retry-after': 'soon' }, undefined],
    ['negative', { 'retry-after': '-3' }, undefined],
  ])('%s', (_name, headers, expected) => {
    expect(retryAfterSeconds(headers, now)).toBe(expected);
  });
});
