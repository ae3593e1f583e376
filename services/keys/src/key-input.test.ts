import { InputError } from '@gw/platform';
import { parseCreateKey, parseListQuery, parseUpdateKey } from './key-input';

const now = new Date('2030-01-01T00:00:00Z');

function paramOf(fn: () => unknown): string | null {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as InputError).param;
  }
  throw new Error('expected an InputError');
}

describe('parseCreateKey', () => {
  it('accepts a full body and converts the limit exactly to micros', () => {
    expect(parseCreateKey({ name: ' ci ', limit: 12.345678, limit_reset: 'weekly', expires_at: '2030-02-01T10:00:00+02:00' }, now)).toEqual({
      name: 'ci', limit_micros: 12_345_678, limit_reset: 'weekly', expires_at: '2030-02-01T08:00:00.000Z', requests_per_minute: null, tokens_per_minute: null,
    });
    expect(parseCreateKey({ name: 'n', limit: null, limit_reset: null, expires_at: null, requests_per_minute: null, tokens_per_minute: null }, now))
      .toEqual({ name: 'n', limit_micros: null, limit_reset: null, expires_at: null, requests_per_minute: null, tokens_per_minute: null });
    expect(parseCreateKey({ name: 'n', requests_per_minute: 60, tokens_per_minute: 100_000 }, now))
      .toMatchObject({ requests_per_minute: 60, tokens_per_minute: 100_000 });
    expect(parseCreateKey({ name: 'n', limit: 0.1 }, now).limit_micros).toBe(100_000);
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 7 }, 'name'],
    [{ name: 'x'.repeat(129) }, 'name'],
    [{ name: 'ci\u0000key' }, 'name'],
    [{ name: 'line one\nline two' }, 'name'],
    [{ name: 'bell\u0007' }, 'name'],
    [{ name: 'c1\u009b[31m' }, 'name'],
    [{ name: 'n', limit: -1 }, 'limit'],
    [{ name: 'n', limit: '5' }, 'limit'],
    [{ name: 'n', limit: 1.0000001 }, 'limit'],
    [{ name: 'n', limit: 1e30 }, 'limit'],
    [{ name: 'n', limit_reset: 'yearly' }, 'limit_reset'],
    [{ name: 'n', expires_at: 'tomorrow' }, 'expires_at'],
    [{ name: 'n', expires_at: '2030-02-01T10:00:00' }, 'expires_at'],
    [{ name: 'n', expires_at: '2029-12-31T23:59:59Z' }, 'expires_at'],
    [{ name: 'n', expires_at: '2031-02-30' }, 'expires_at'],
    [{ name: 'n', expires_at: '2031-02-29T00:00:00Z' }, 'expires_at'],
    [{ name: 'n', expires_at: '2031-01-01T00:00:00+25:00' }, 'expires_at'],
    [{ name: 'n', expires_at: 1893456000000 }, 'expires_at'],
    [{ name: 'n', requests_per_minute: 0 }, 'requests_per_minute'],
    [{ name: 'n', requests_per_minute: 1.5 }, 'requests_per_minute'],
    [{ name: 'n', tokens_per_minute: '100' }, 'tokens_per_minute'],
    [{ name: 'n', disabled: true }, 'disabled'],
    [{ name: 'n', colour: 'red' }, 'colour'],
    [[], 'body'],
    ['name', 'body'],
  ])('refuses %j naming %s', (body, param) => {
    expect(paramOf(() => parseCreateKey(body, now))).toBe(param);
  });
});

describe('parseUpdateKey', () => {
  it('keeps only the given fields', () => {
    expect(parseUpdateKey({ disabled: true })).toEqual({ disabled: true });
    expect(parseUpdateKey({ name: 'x', limit: null, limit_reset: 'daily' })).toEqual({ name: 'x', limit_micros: null, limit_reset: 'daily' });
    expect(parseUpdateKey(undefined)).toEqual({});
  });
  it.each([
    [{ disabled: 'yes' }, 'disabled'],
    [{ name: '' }, 'name'],
    [{ limit: -0.5 }, 'limit'],
    [{ limit_reset: 'hourly' }, 'limit_reset'],
    [{ expires_at: null }, 'expires_at'],
    [{ hash: 'abc' }, 'hash'],
  ])('refuses %j naming %s', (body, param) => {
    expect(paramOf(() => parseUpdateKey(body))).toBe(param);
  });
});

describe('parseListQuery', () => {
  it('defaults and parses', () => {
    expect(parseListQuery({})).toEqual({ offset: 0, includeDisabled: false });
    expect(parseListQuery({ offset: '5', include_disabled: 'true' })).toEqual({ offset: 5, includeDisabled: true });
  });
  it.each([
    [{ offset: '-1' }, 'offset'],
    [{ offset: '1.5' }, 'offset'],
    [{ offset: ['1', '2'] }, 'offset'],
    [{ include_disabled: 'yes' }, 'include_disabled'],
  ])('refuses %j naming %s', (query, param) => {
    expect(paramOf(() => parseListQuery(query))).toBe(param);
  });
});
