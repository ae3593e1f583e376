import { IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { TOPICS, type CallFailed, type UsageEvent } from '@gw/proto';
import type { BusMessage } from '@gw/bus';
import { ledgerCollection } from '../ledger';
import { BILLING_TEST_SECRET, Engines, eventually, silentLogger, STORE_ENGINES, usageEvent } from '../test-harness';
import { createFailedCallsHandler, FAILED_CALL_RETENTION_MS, failedCallsCollection, sweepFailedCalls } from './failed-calls';
import { pruneCountedPostings, usageStatsCollection } from './usage-stats';

jest.setTimeout(120_000);

const T0 = Date.parse('2026-11-02T10:00:10Z');
let sequence = 0;

function failure(overrides: Partial<CallFailed> = {}): CallFailed {
  sequence++;
  return {
    request_id: `br-00000000-0000-4000-a000-${String(sequence).padStart(12, '0')}`, account_id: 'acct_a', key_hash: 'aa'.repeat(32),
    model: 'test/chat', provider: 'sim', api_type: 'chat', error_kind: 'upstream_error', status: 502, client_error: false, streamed: false,
    latency_ms: 5_000, created_at_ms: T0, trace_id: '', ...overrides,
  };
}

const asMessages = (events: CallFailed[]): BusMessage<unknown>[] =>
  events.map((value, i) => ({ topic: TOPICS.callFailures, key: value.account_id, value: JSON.parse(JSON.stringify(value)), offset: String(i), partition: 0 }));

async function get(port: number, path: string) {
  const identity = { accountId: 'acct_a', keyHash: 'aa'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
  const token = new IdentitySigner(BILLING_TEST_SECRET, 'edge').mint({ method: 'GET', path }, identity, 'trace-failures-test');
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { [IDENTITY_HEADER]: token } });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (await res.json()) as any;
}

describe.each(STORE_ENGINES)('failed calls in the statistics (%s store, events through the bus)', (engine) => {
  let engines: Engines;
  let service: RunningService;
  const failures = [
    failure(),
    failure({ error_kind: 'timeout', status: 504, provider: 'sim2' }),
    failure({ error_kind: 'rate_limit_exceeded', status: 429, streamed: true }),
    failure({ error_kind: 'insufficient_balance', status: 402, client_error: true, provider: '' }),
    failure({ account_id: 'acct_other' }),
  ];
  // A billed stream that broke after its first byte, and one that succeeded.
  const usage: UsageEvent[] = [
    usageEvent({ created_at_ms: T0, streamed: true, status: 'failed', finish_reason: '', latency_ms: 300, generation_time_ms: 200 }),
    usageEvent({ created_at_ms: T0, latency_ms: 100 }),
  ];
  const range = `from=${encodeURIComponent('2026-11-02T00:00:00Z')}&to=${encodeURIComponent('2026-11-03T00:00:00Z')}`;

  beforeAll(async () => {
    engines = await Engines.open(engine);
    service = await engines.startService({ seeds: [{ id: 'acct_a', wallet_usd: '10' }, { id: 'acct_other', wallet_usd: '10' }] });
    await engines.bus.publish(TOPICS.callFailures, failures.map((value) => ({ key: value.account_id, value })));
    // Reported again (a producer retry, or an async job's re-run failing the same way): counted once.
    await engines.bus.publish(TOPICS.callFailures, failures.slice(0, 2).map((value) => ({ key: value.account_id, value })));
    await engines.bus.publish(TOPICS.usage, usage.map((value) => ({ key: value.account_id, value })));
    await eventually('every failure counted', async () => (await failedCallsCollection(engines.store).count({ state: 'applied' })) === failures.length, 60_000);
    await eventually('the usage applied', async () => (await ledgerCollection(engines.store).count({ state: 'applied' })) === usage.length, 60_000);
  });

  afterAll(async () => {
    await service.stop();
    await engines.close();
  });

  test("every failed call is a request; provider failures and broken streams are errors by kind, the caller's refusals apart", async () => {
    const body = await get(service.httpPort, `/v1/usage?${range}&interval=day`);
    expect(body.data).toEqual([expect.objectContaining({
      requests: 6, errors: 4, client_errors: 1, streamed_requests: 2,
      error_kinds: { upstream_error: 1, timeout: 1, rate_limit_exceeded: 1, stream_interrupted: 1, insufficient_balance: 1 },
    })]);
    // The broken stream is still billed for what it delivered.
    const ledger = await ledgerCollection(engines.store).find({ account_id: 'acct_a' });
    expect(body.data[0].charged_cost).toBe((ledger.reduce((s, e) => s + e.charged_micros, 0) / 1e6).toFixed(6));
    expect(ledger.find((e) => e._id === usage[0].request_id)?.charged_micros).toBeGreaterThan(0);
    // A call that failed before an answer adds no latency: the percentiles are the billed calls' (100 and 300 ms).
    expect(body.data[0].latency_ms_p95).toBeLessThan(400);
  });

  test('by provider: a failure names the provider tried last; one refused before routing names none', async () => {
    const body = await get(service.httpPort, `/v1/usage?${range}&interval=day&group_by=provider`);
    const byProvider = Object.fromEntries(body.data.map((r: { provider: string; errors: number; client_errors: number }) => [r.provider, [r.errors, r.client_errors]]));
    expect(byProvider).toEqual({ '': [0, 1], sim: [3, 0], sim2: [1, 0] });
  });
});

describe.each(STORE_ENGINES)('failed calls under crashes and redelivery (%s store)', (engine) => {
  let engines: Engines;
  beforeEach(async () => { engines = await Engines.open(engine); });
  afterEach(() => engines.close());

  const errorsCounted = async () => (await usageStatsCollection(engines.store).find({})).reduce((s, r) => s + r.errors, 0);

  test('a batch that crashed after its statistics write, delivered again cut differently: each failure counted once; marks pruned, docs swept', async () => {
    const stats = usageStatsCollection(engines.store);
    const [a, b, c] = [failure(), failure(), failure()];
    const handler = createFailedCallsHandler({ store: engines.store, stats, logger: silentLogger() });
    const failed = failedCallsCollection(engines.store);
    // The crash: the statistics landed, the applied mark did not.
    await handler(asMessages([a, b]));
    await failed.updateMany({}, { $set: { state: 'applying' } });
    await handler(asMessages([b, c]));
    await handler(asMessages([a, b, c]));
    expect(await errorsCounted()).toBe(3);
    expect(await failed.count({ state: 'applied' })).toBe(3);

    expect(await pruneCountedPostings(stats, [ledgerCollection(engines.store), failed])).toBe(1);
    const [row] = await stats.find({});
    expect([row.postings, row.marks, row.errors]).toEqual([{}, 0, 3]);
    expect(await sweepFailedCalls(failed, Date.now() + FAILED_CALL_RETENTION_MS + 1)).toBe(3);
    expect(await errorsCounted()).toBe(3);
  });

  test('malformed events are skipped, the rest counted', async () => {
    const handler = createFailedCallsHandler({ store: engines.store, stats: usageStatsCollection(engines.store), logger: silentLogger() });
    const good = failure({ error_kind: 'No Such Kind!' });
    await handler([...asMessages([good]), { topic: TOPICS.callFailures, key: 'k', value: { request_id: '../x' }, offset: '9', partition: 0 }]);
    const [row] = await usageStatsCollection(engines.store).find({});
    expect([row.errors, row.error_kinds]).toEqual([1, { other: 1 }]);
  });
});
