import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RateLimitError, type Identity } from '@gw/platform';
import { createStore, type Store } from '@gw/store';
import { RateLimiter, type RateLimitSettings } from './rate-limiter';
import { MemoryWindowCounters, StoreWindowCounters, type WindowCounters } from './window-counters';

const identity = (keyHash: string, accountId = 'acct_rl'): Identity =>
  ({ accountId, keyHash, isManagement: false, keyLimitMicros: null, keyLimitReset: null });

const settings = (key: [number, number], account: [number, number]): RateLimitSettings => ({
  key: { requestsPerMinute: key[0], tokensPerMinute: key[1] },
  account: { requestsPerMinute: account[0], tokensPerMinute: account[1] },
});

describe.each(['memory', 'embedded', 'mongo'] as const)('RateLimiter on %s counters', (engine) => {
  let dir: string;
  let store: Store | null = null;
  let counters: WindowCounters;
  // 20 s into a minute, so the window resets in 40 s.
  let now = Date.parse('2026-11-24T08:00:20Z');
  const clock = () => now;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-rate-limits-'));
    if (engine === 'mongo') {
      const url = new URL(process.env.MONGO_URL!);
      url.pathname = `/rate_limits_test_${process.pid}_${Date.now().toString(36)}`;
      store = createStore({ engine: 'mongo', url: url.toString() });
    } else if (engine === 'embedded') {
      store = createStore({ engine: 'embedded', dataDir: dir });
    }
  });
  beforeEach(async () => {
    now = Date.parse('2026-11-24T08:00:20Z');
    if (store) await store.collection('edge_rate_windows').deleteMany({});
    if (store) {
      const shared = new StoreWindowCounters(store);
      await shared.init();
      counters = shared;
    } else {
      counters = new MemoryWindowCounters();
    }
  });
  afterAll(async () => {
    await store?.collection('edge_rate_windows').deleteMany({});
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('admits a key\'s requests up to its limit, then answers 429 with Retry-After until the minute ends', async () => {
    const limiter = new RateLimiter(counters, settings([3, 0], [0, 0]), clock);
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push(await limiter.admit(identity('k1'), true));
    expect(seen.map((a) => a.refusal)).toEqual([null, null, null]);
    expect(seen.map((a) => a.headers['x-ratelimit-remaining-requests'])).toEqual(['2', '1', '0']);
    expect(seen[0]!.headers).toEqual({ 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-reset-requests': '40s' });

    const refused = await limiter.admit(identity('k1'), true);
    expect(refused.refusal).toBeInstanceOf(RateLimitError);
    expect(refused.refusal).toMatchObject({ status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '40' } });
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
    // Another key of the account has its own budget.
    expect((await limiter.admit(identity('k2'), true)).refusal).toBeNull();

    now = Date.parse('2026-11-24T08:01:00Z');
    expect((await limiter.admit(identity('k1'), true)).refusal).toBeNull();
  });

  it('two limiters on the same counters (two edge instances) share one budget', async () => {
    const a = new RateLimiter(counters, settings([0, 0], [4, 0]), clock);
    const b = new RateLimiter(counters, settings([0, 0], [4, 0]), clock);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).admit(identity(`k${i}`), true)));
    expect(results.filter((r) => r.refusal === null)).toHaveLength(4);
  });

  it('tokens: admits while the minute\'s tokens are below the limit, on metered routes only', async () => {
    const limiter = new RateLimiter(counters, settings([0, 100], [0, 1000]), clock);
    expect((await limiter.admit(identity('k1'), true)).headers).toEqual({ 'x-ratelimit-limit-tokens': '100', 'x-ratelimit-remaining-tokens': '100', 'x-ratelimit-reset-tokens': '40s' });
    await limiter.recordTokens('acct_rl', 'k1', 60);
    expect((await limiter.admit(identity('k1'), true)).headers['x-ratelimit-remaining-tokens']).toBe('40');
    await limiter.recordTokens('acct_rl', 'k1', 60);
    const refused = await limiter.admit(identity('k1'), true);
    expect(refused.refusal?.message).toMatch(/100 tokens per minute for this key/);
    expect(refused.headers['x-ratelimit-remaining-tokens']).toBe('0');
    // Not a model route: no token budget applies.
    expect((await limiter.admit(identity('k1'), false)).refusal).toBeNull();
    // Another key has its own budget (the tighter one is shown)...
    expect((await limiter.admit(identity('k2'), true)).headers['x-ratelimit-remaining-tokens']).toBe('100');
    // ...but the account's counts every key's tokens.
    await limiter.recordTokens('acct_rl', 'k3', 900);
    expect((await limiter.admit(identity('k2'), true)).refusal?.message).toMatch(/1000 tokens per minute for this account/);
  });

  it('tokens count in the minute the call ended; a call that ended in a minute already over counts nothing', async () => {
    const limiter = new RateLimiter(counters, settings([0, 100], [0, 0]), clock);
    await limiter.recordTokens('acct_rl', 'k1', 500, now - 60_000);
    expect((await limiter.admit(identity('k1'), true)).headers['x-ratelimit-remaining-tokens']).toBe('100');
    await limiter.recordTokens('acct_rl', 'k1', 30, now - 10_000);
    expect((await limiter.admit(identity('k1'), true)).headers['x-ratelimit-remaining-tokens']).toBe('70');
  });

  it('sweeping forgets ended windows only', async () => {
    const limiter = new RateLimiter(counters, settings([1, 0], [0, 0]), clock);
    await limiter.admit(identity('k1'), true);
    await limiter.sweep();
    expect((await limiter.admit(identity('k1'), true)).refusal).not.toBeNull();
    now += 60_000;
    await limiter.sweep();
    if (store) expect(await store.collection('edge_rate_windows').count({})).toBe(0);
  });
});
