import type { ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedBus, type Bus } from '@gw/bus';
import { createLogger, Metrics, type Identity } from '@gw/platform';
import { createStore, type Store } from '@gw/store';
import { TOPICS } from '@gw/proto';
import { countedCall, openEdgeRateLimits, type EdgeRateLimits } from './edge-rate-limits';

const identity: Identity = { accountId: 'acct_hung', keyHash: 'k_hung', isManagement: false, keyLimitMicros: null, keyLimitReset: null };
/** The key has no limits of its own: the settings' apply. */
const NO_OVERRIDE = { requestsPerMinute: 0, tokensPerMinute: 0 };

/**
 * The shared counters' store hangs (a frozen MongoDB: connections accepted, nothing answered). A request waits
 * for its admission at most the budget, then goes on: the edge must not hold every call for the store's timeout.
 */
describe('edge rate limits on a counter store that does not answer', () => {
  let server: Server;
  const sockets: Socket[] = [];
  let dir: string;
  let busStore: Store;
  let hungStore: Store;
  let bus: Bus;
  let limits: EdgeRateLimits;
  const BUDGET_MS = 200;

  beforeAll(async () => {
    server = createServer((socket) => { sockets.push(socket); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    hungStore = createStore({ engine: 'mongo', url: `mongodb://127.0.0.1:${port}/hung`, opTimeoutMs: 10_000 });
    dir = await mkdtemp(join(tmpdir(), 'gw-edge-hung-counters-'));
    busStore = createStore({ engine: 'embedded', dataDir: dir });
    const logger = createLogger(null, 'silent');
    bus = createEmbeddedBus({ store: busStore, logger });
    limits = openEdgeRateLimits(
      { key: { requestsPerMinute: 1, tokensPerMinute: 0 }, account: { requestsPerMinute: 0, tokensPerMinute: 0 } },
      { bus, store: hungStore, logger, metrics: new Metrics('edge-test', false), admissionBudgetMs: BUDGET_MS },
    );
  });

  afterAll(async () => {
    await limits.usage.stop();
    await limits.sweeper.stop();
    await bus.close();
    await hungStore.close();
    await busStore.close();
    sockets.forEach((s) => s.destroy());
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  test('admits each request once the budget has passed, long before the store would give up', async () => {
    const headers: Record<string, unknown> = {};
    const res = { setHeader: (name: string, value: unknown) => { headers[name] = value; } } as unknown as ServerResponse;
    for (let i = 0; i < 3; i++) {
      const startedAt = Date.now();
      await expect(limits.enforce(res, identity, true, NO_OVERRIDE)).resolves.toBeUndefined();
      const tookMs = Date.now() - startedAt;
      expect(tookMs).toBeGreaterThanOrEqual(BUDGET_MS - 50);
      expect(tookMs).toBeLessThan(BUDGET_MS + 1_500);
    }
    // Nothing counted, so no rate limit headers: the requests went on unlimited while the store hung.
    expect(headers).toEqual({});
  });
});

/**
 * The usage topic is written by several services. A message the token limits cannot read counts nothing and is
 * passed over: thrown on, its batch would come back forever and no later call's tokens would count.
 */
describe('edge token limits reading usage messages they cannot read', () => {
  let dir: string;
  let busStore: Store;
  let bus: Bus;
  let limits: EdgeRateLimits;
  const caller: Identity = { ...identity, accountId: 'acct_tokens', keyHash: 'k_tokens' };
  const res = { setHeader: () => undefined } as unknown as ServerResponse;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-edge-usage-'));
    busStore = createStore({ engine: 'embedded', dataDir: dir });
    const logger = createLogger(null, 'silent');
    bus = createEmbeddedBus({ store: busStore, logger, pollMs: 20 });
    limits = openEdgeRateLimits(
      { key: { requestsPerMinute: 0, tokensPerMinute: 0 }, account: { requestsPerMinute: 0, tokensPerMinute: 100 } },
      { bus, store: undefined, logger, metrics: new Metrics('edge-test', false) },
    );
    await limits.usage.whenJoined();
  });

  afterAll(async () => {
    await limits.usage.stop();
    await limits.sweeper.stop();
    await bus.close();
    await busStore.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('counts the call after them', async () => {
    await expect(limits.enforce(res, caller, true, NO_OVERRIDE)).resolves.toBeUndefined();
    await bus.publish(TOPICS.usage, [
      { key: 'x', value: null },
      { key: 'x', value: 'text' },
      { key: 'x', value: { account_id: 42, usage: { total_tokens: 1_000 } } },
      { key: 'x', value: { account_id: caller.accountId, key_hash: caller.keyHash, usage: 'many' } },
    ] as never);
    await bus.publish(TOPICS.usage, [{ key: 'x', value: { account_id: caller.accountId, key_hash: caller.keyHash, usage: { total_tokens: 150 } } }] as never);
    const deadline = Date.now() + 10_000;
    let refusal: unknown = null;
    while (refusal === null && Date.now() < deadline) {
      await limits.enforce(res, caller, true, NO_OVERRIDE).catch((err: unknown) => { refusal = err; });
      if (refusal === null) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(refusal).toMatchObject({ status: 429 });
  });
});

describe('countedCall', () => {
  test.each([
    ['null', null],
    ['a string', 'text'],
    ['no account', { usage: { total_tokens: 5 } }],
    ['an account that is not a string', { account_id: 7, usage: { total_tokens: 5 } }],
  ])('counts nothing for %s', (_name, value) => {
    expect(countedCall(value)).toBeNull();
  });

  test('reads tokens and the end of the call, and nothing from fields of the wrong kind', () => {
    expect(countedCall({ account_id: 'a', key_hash: 'k', usage: { prompt_tokens: 3, completion_tokens: 4 }, created_at_ms: 1_000, latency_ms: 20 }))
      .toEqual({ accountId: 'a', keyHash: 'k', tokens: 7, endedAtMs: 1_020 });
    expect(countedCall({ account_id: 'a', key_hash: ['k'], usage: [], created_at_ms: 'soon' }))
      .toEqual({ accountId: 'a', keyHash: '', tokens: 0, endedAtMs: undefined });
  });
});
