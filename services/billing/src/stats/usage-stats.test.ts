import { IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { TOPICS, type UsageEvent } from '@gw/proto';
import { accountsCollection, ensureSeedAccounts } from '../accounts';
import { ledgerCollection } from '../ledger';
import { asBatch, BILLING_TEST_SECRET, Engines, eventually, silentLogger, STORE_ENGINES, usageEvent } from '../test-harness';
import { createUsageBatchHandler, type UsageBatchFaults } from '../usage-consumer';
import { pruneCountedPostings, usageStatsCollection } from './usage-stats';
import { FinishedPostings } from '../finished-postings';

const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const T0 = Date.parse('2026-11-02T10:00:10Z');

/** As the edge calls billing: an identity token bound to this request. */
async function get(port: number, path: string, accountId = 'acct_a') {
  const identity = { accountId, keyHash: KEY_A, isManagement: false, keyLimitMicros: null, keyLimitReset: null };
  const token = new IdentitySigner(BILLING_TEST_SECRET, 'edge').mint({ method: 'GET', path }, identity, 'trace-usage-test');
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { [IDENTITY_HEADER]: token } });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (await res.json()) as any };
}

describe.each(STORE_ENGINES)('GET /v1/usage (%s store, usage through the bus)', (engine) => {
  let engines: Engines;
  let service: RunningService;
  const events: UsageEvent[] = [
    usageEvent({ created_at_ms: T0, latency_ms: 100 }),
    usageEvent({ created_at_ms: T0 + 5_000, latency_ms: 300, key_hash: KEY_B }),
    // The per-request fee makes the two deployments' costs differ.
    usageEvent({ created_at_ms: T0 + 60_000, deployment: 'dep-fee', model: 'test/chat', provider: 'sim2', latency_ms: 900, streamed: true, generation_time_ms: 700 }),
    usageEvent({ created_at_ms: T0 + 61_000, status: 'failed', usage: { prompt_tokens: 10 } as UsageEvent['usage'], api_type: 'responses', latency_ms: 50 }),
    usageEvent({ created_at_ms: T0 + 3_600_000, usage: { input_tokens: 7, output_tokens: 3 } as UsageEvent['usage'], api_type: 'messages' }),
    usageEvent({ account_id: 'acct_other', created_at_ms: T0 }),
  ];
  const range = `from=${encodeURIComponent('2026-11-02T00:00:00Z')}&to=${encodeURIComponent('2026-11-03T00:00:00Z')}`;

  beforeAll(async () => {
    engines = await Engines.open(engine);
    service = await engines.startService({ seeds: [{ id: 'acct_a', wallet_usd: '10' }, { id: 'acct_other', wallet_usd: '10' }, { id: 'acct_live', wallet_usd: '10' }] });
    await engines.bus.publish(TOPICS.usage, events.map((value) => ({ key: value.account_id, value })));
    // The same events delivered again (a producer retry): counted once, as in the ledger.
    await engines.bus.publish(TOPICS.usage, events.map((value) => ({ key: value.account_id, value })));
    await eventually('every event applied', async () => (await ledgerCollection(engines.store).count({ state: 'applied' })) === events.length);
  });

  afterAll(async () => {
    await service.stop();
    await engines.close();
  });

  test('per model over the day: charged cost equals the ledger sum, each call counted once', async () => {
    const { status, body } = await get(service.httpPort, `/v1/usage?${range}&interval=day&group_by=model`);
    expect(status).toBe(200);
    expect(body.object).toBe('list');
    const ledger = await ledgerCollection(engines.store).find({ account_id: 'acct_a' });
    const ledgerMicros = ledger.reduce((s, e) => s + e.charged_micros, 0);
    expect(body.data).toEqual([expect.objectContaining({
      start: '2026-11-02T00:00:00.000Z', end: '2026-11-03T00:00:00.000Z', model: 'test/chat',
      requests: 5, errors: 1, streamed_requests: 1, prompt_tokens: 310, completion_tokens: 150, input_tokens: 7, output_tokens: 3,
    })]);
    expect(body.data[0].charged_cost).toBe((ledgerMicros / 1e6).toFixed(6));
    expect(body.data[0].list_cost).toBe((ledger.reduce((s, e) => s + e.list_micros, 0) / 1e6).toFixed(6));
    expect(body.data[0].key_hash).toBeUndefined();
  });

  test('per minute by key, provider and API type: rows split as asked, percentiles per row', async () => {
    const { body } = await get(service.httpPort, `/v1/usage?${range}&interval=minute&group_by=key,provider,api_type`);
    const rows = body.data.map((r: Record<string, unknown>) => [r.start, (r.key_hash as string).slice(0, 2), r.provider, r.api_type, r.requests, r.errors]);
    expect(rows).toEqual([
      ['2026-11-02T10:00:00.000Z', 'aa', 'sim', 'chat', 1, 0],
      ['2026-11-02T10:00:00.000Z', 'bb', 'sim', 'chat', 1, 0],
      ['2026-11-02T10:01:00.000Z', 'aa', 'sim', 'responses', 1, 1],
      ['2026-11-02T10:01:00.000Z', 'aa', 'sim2', 'chat', 1, 0],
      ['2026-11-02T11:00:00.000Z', 'aa', 'sim', 'messages', 1, 0],
    ]);
    const streamed = body.data.find((r: Record<string, unknown>) => r.provider === 'sim2');
    expect(streamed.latency_ms_p50).toBeGreaterThanOrEqual(860);
    expect(streamed.latency_ms_p50).toBeLessThanOrEqual(940);
    // Time to first token: latency less generation time (200 ms), streams only.
    expect(streamed.ttft_ms_p50).toBeGreaterThanOrEqual(190);
    expect(streamed.ttft_ms_p50).toBeLessThanOrEqual(210);
    expect(body.data[0].ttft_ms_p50).toBeNull();
  });

  test('hour interval rolls up the minutes; the other account sees only its own call', async () => {
    const { body } = await get(service.httpPort, `/v1/usage?${range}&interval=hour`);
    expect(body.data.map((r: Record<string, unknown>) => [r.start, r.requests])).toEqual([['2026-11-02T10:00:00.000Z', 4], ['2026-11-02T11:00:00.000Z', 1]]);
    const other = await get(service.httpPort, `/v1/usage?${range}&interval=day`, 'acct_other');
    expect(other.body.data.map((r: Record<string, unknown>) => r.requests)).toEqual([1]);
  });

  test('the running service drops settled marks from the current minute\'s row within seconds', async () => {
    // A row is rewritten whole by each posting that counts into it, so it must not keep a minute of marks.
    const live = Array.from({ length: 5 }, () => usageEvent({ account_id: 'acct_live', created_at_ms: Date.now() }));
    for (const value of live) await engines.bus.publish(TOPICS.usage, [{ key: value.account_id, value }]);
    const stats = usageStatsCollection(engines.store);
    await eventually('the live calls counted', async () => (await stats.find({ account_id: 'acct_live' })).reduce((n, r) => n + r.requests, 0) === live.length);
    await eventually('the live rows\' marks dropped', async () => (await stats.find({ account_id: 'acct_live' })).every((r) => r.marks === 0 && r.has_marks === undefined));
    expect((await stats.find({ account_id: 'acct_live' })).reduce((n, r) => n + r.requests, 0)).toBe(live.length);
  });

  test.each([
    ['interval=week', 'interval'],
    ['interval=minute&from=2026-11-01T00:00:00Z&to=2026-11-03T00:00:00Z', 'from'],
    ['from=2026-11-03T00:00:00Z&to=2026-11-02T00:00:00Z', 'from'],
    ['from=yesterday', 'from'],
    ['to=1e9', 'to'],
    ['interval=day&from=2026-11-31&to=2026-12-05', 'from'],
    ['to=2026-11-03T24:00:00Z', 'to'],
    ['from=2026-11-02T00:00:00', 'from'],
    ['group_by=model,colour', 'group_by'],
    ['interval=day&interval=hour', 'interval'],
    // Names every object has (its prototype's) are not intervals or groupings either.
    ['interval=constructor', 'interval'],
    ['group_by=toString', 'group_by'],
    ['group_by=model,__proto__', 'group_by'],
  ])('bad input %s: 400 naming %s', async (query, param) => {
    const { status, body } = await get(service.httpPort, `/v1/usage?${query}`);
    expect(status).toBe(400);
    expect(body.error).toEqual(expect.objectContaining({ type: 'invalid_request_error', param }));
  });
});

class Crash extends Error {}

describe.each(STORE_ENGINES)('statistics under crashes and redelivery (%s store)', (engine) => {
  let engines: Engines;
  beforeEach(async () => {
    engines = await Engines.open(engine);
    await ensureSeedAccounts(accountsCollection(engines.store), [{ id: 'acct_a', walletMicros: 1_000_000, creditMicros: 0, priceFactorPpm: 1_000_000 }], silentLogger(), Date.now());
  });
  afterEach(() => engines.close());

  const handler = (faults?: UsageBatchFaults) => createUsageBatchHandler({ store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger(), faults });
  const counted = async () => (await usageStatsCollection(engines.store).find({})).reduce((s, r) => s + r.requests, 0);

  test.each(['afterLedgerInsert', 'afterStatsRecord', 'afterBalanceUpdate'] as const)('crash %s, then the batch again (cut differently): each call counted once', async (point) => {
    const [a, b, c] = [usageEvent(), usageEvent(), usageEvent()];
    let fired = false;
    const crashing = handler({ [point]: () => { if (!fired) { fired = true; throw new Crash(point); } } });
    await expect(crashing(asBatch([a, b]))).rejects.toBeInstanceOf(Crash);
    await handler()(asBatch([b, c]));
    await handler()(asBatch([a, b, c]));
    expect(await counted()).toBe(3);
    const charged = (await usageStatsCollection(engines.store).find({})).reduce((s, r) => s + r.charged_micros, 0);
    const ledger = (await ledgerCollection(engines.store).find({})).reduce((s, e) => s + e.charged_micros, 0);
    expect(charged).toBe(ledger);
  });

  test('pruning drops the marks of settled postings only; a posting still open is counted once after it', async () => {
    await handler()(asBatch([usageEvent(), usageEvent()]));
    const stranded = asBatch([usageEvent()]);
    let fired = false;
    await expect(handler({ afterStatsRecord: () => { if (!fired) { fired = true; throw new Crash('after stats'); } } })(stranded)).rejects.toBeInstanceOf(Crash);

    const stats = usageStatsCollection(engines.store);
    expect(await pruneCountedPostings(stats, [ledgerCollection(engines.store)])).toBe(1);
    const [row] = await stats.find({});
    expect(Object.keys(row.postings)).toHaveLength(1);
    expect(row.marks).toBe(1);

    await handler()(stranded);
    expect(await counted()).toBe(3);
    expect(await pruneCountedPostings(stats, [ledgerCollection(engines.store)])).toBe(1);
    const [after] = await stats.find({});
    expect([after.postings, after.marks, after.has_marks, after.requests]).toEqual([{}, 0, undefined, 3]);
    // Nothing left to prune.
    expect(await pruneCountedPostings(stats, [ledgerCollection(engines.store)])).toBe(0);
  });

  test('with the consumer\'s finished postings, pruning looks up only the postings it did not see finish', async () => {
    const finishedPostings = new FinishedPostings();
    const shared = (faults?: UsageBatchFaults) => createUsageBatchHandler({ store: engines.store, bus: engines.bus, priceBook: engines.priceBook(), logger: silentLogger(), faults, finishedPostings });
    for (let i = 0; i < 5; i++) await shared()(asBatch([usageEvent(), usageEvent()]));
    const stranded = asBatch([usageEvent()]);
    let fired = false;
    await expect(shared({ afterStatsRecord: () => { if (!fired) { fired = true; throw new Crash('after stats'); } } })(stranded)).rejects.toBeInstanceOf(Crash);

    // The pruner's lookups by posting, through a ledger handle of its own.
    const looked: string[][] = [];
    const ledger = Object.create(ledgerCollection(engines.store)) as ReturnType<typeof ledgerCollection>;
    ledger.find = (filter, opts) => {
      looked.push([...((filter.posting_id as { $in: string[] } | undefined)?.$in ?? [])]);
      return ledgerCollection(engines.store).find(filter, opts);
    };
    const stats = usageStatsCollection(engines.store);
    expect(await pruneCountedPostings(stats, [ledger], finishedPostings)).toBe(1);
    // One lookup, of the stranded posting alone; the five finished ones were dropped on the consumer's word.
    expect(looked).toHaveLength(1);
    expect(looked[0]).toHaveLength(1);
    const [row] = await stats.find({});
    expect(Object.keys(row.postings)).toEqual(looked[0]);

    await shared()(stranded);
    expect(await pruneCountedPostings(stats, [ledger], finishedPostings)).toBe(1);
    expect(looked).toHaveLength(1);
    const [after] = await stats.find({});
    expect([after.postings, after.marks, after.requests]).toEqual([{}, 0, 11]);
  });

  test('two consumers racing on the same batch count it once', async () => {
    const batch = asBatch([usageEvent(), usageEvent(), usageEvent()]);
    await Promise.all([handler()(batch), handler()(batch), handler()(batch)]);
    expect(await counted()).toBe(3);
  });

  test('200 calls of one minute in 20 batches are one statistics row (a write per batch, not per call)', async () => {
    for (let i = 0; i < 20; i++) await handler()(asBatch(Array.from({ length: 10 }, () => usageEvent())));
    const rows = await usageStatsCollection(engines.store).find({});
    expect(rows).toHaveLength(1);
    expect(rows[0].requests).toBe(200);
    expect(Object.keys(rows[0].postings)).toHaveLength(20);
  });
});
