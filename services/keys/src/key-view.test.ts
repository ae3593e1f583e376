import { hashSecret, isKeyHash, maskSecret, newSecret, sameHash } from './key-secret';
import type { KeyDoc } from './key-store';
import { limitRemainingMicros, toKeyObject } from './key-view';

const usage = { total: 9_000_000, daily: 1_250_000, weekly: 3_000_000, monthly: 7_500_001 };

describe('limit_remaining', () => {
  it('is null without a limit', () => {
    expect(limitRemainingMicros({ limit_micros: null, limit_reset: 'daily' }, usage)).toBeNull();
  });
  it('subtracts the current period usage for each reset', () => {
    expect(limitRemainingMicros({ limit_micros: 10_000_000, limit_reset: 'daily' }, usage)).toBe(8_750_000);
    expect(limitRemainingMicros({ limit_micros: 10_000_000, limit_reset: 'weekly' }, usage)).toBe(7_000_000);
    expect(limitRemainingMicros({ limit_micros: 10_000_000, limit_reset: 'monthly' }, usage)).toBe(2_499_999);
  });
  it('subtracts total usage when the limit never resets, and stops at zero', () => {
    expect(limitRemainingMicros({ limit_micros: 10_000_000, limit_reset: null }, usage)).toBe(1_000_000);
    expect(limitRemainingMicros({ limit_micros: 5_000_000, limit_reset: null }, usage)).toBe(0);
  });
});

describe('toKeyObject', () => {
  it('renders micros as exact USD numbers', () => {
    const doc: KeyDoc = {
      _id: 'a'.repeat(64), account_id: 'acct', name: 'n', label: 'sk-gw-v1-abc...ff', disabled: false, is_management: false,
      limit_micros: 10_000_000, limit_reset: 'monthly', created_at: 't0', updated_at: 't1', expires_at: null,
    };
    expect(toKeyObject(doc, usage)).toEqual({
      hash: doc._id, name: 'n', label: 'sk-gw-v1-abc...ff', disabled: false, limit: 10, limit_remaining: 2.499999,
      limit_reset: 'monthly', requests_per_minute: null, tokens_per_minute: null, usage: 9, usage_daily: 1.25, usage_weekly: 3, usage_monthly: 7.500001,
      created_at: 't0', updated_at: 't1', expires_at: null,
    });
  });
});

describe('secrets', () => {
  it('have the documented format, a sha-256 hash and a masked label', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^sk-gw-v1-[0-9a-f]{48}$/);
    expect(isKeyHash(hashSecret(secret))).toBe(true);
    expect(maskSecret(secret)).toBe(`${secret.slice(0, 12)}...${secret.slice(-2)}`);
    expect(newSecret()).not.toBe(secret);
  });
  it('compares hashes in constant time and refuses different or empty ones', () => {
    const h = hashSecret('x');
    expect(sameHash(h, hashSecret('x'))).toBe(true);
    expect(sameHash(h, hashSecret('y'))).toBe(false);
    expect(sameHash('', '')).toBe(false);
  });
});
