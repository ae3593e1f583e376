import { usdToMicros } from '@gw/platform';
import { api, spendableMicros } from '../test-e2e/harness/api';
import { E2E_MODEL } from '../test-e2e/harness/catalog';
import { waitFor } from '../test-e2e/harness/ports';
import { startStack, type TestStack } from '../test-e2e/harness/stack';
import { errorsByCode, startChatLoad, tally, type CallOutcome } from './harness/chat-load';
import { drillEngines } from './harness/engines';
import { reportFigures } from './harness/figures';

/**
 * Broker outage (issue #12): the Kafka broker is killed for 30 s under a steady load of chat calls, then
 * started again on its own data. Calls keep being answered or refused cleanly (usage waits in the store's
 * outbox, holds keep the limits), and once the broker is back every served call is billed exactly once.
 */
jest.setTimeout(170_000);

const OUTAGE_MS = 30_000;
const WARM_UP_MS = 4_000;
const AFTER_MS = 6_000;
/** The clients' patience: a call still running after this is a hang. */
const DEADLINE_MS = 20_000;
const ALLOWANCE_USD = '0.0005';
/** Small enough that the limited clients reach them during the drill. */
const KEY_LIMIT_USD = '0.008';
const LIMITED_CREDIT_USD = '0.008';
const LIMITED_ACCOUNT = 'acct_drill_limited';
// 40 one-word tokens and at most 50 out: the echo simulator answers 41 words, 244 micros at the e2e price.
const PROMPT = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
const BODY = { model: E2E_MODEL, messages: [{ role: 'user', content: PROMPT }], max_completion_tokens: 50 };

interface BilledRecord { request_id: string; charged_cost: string }

/** The billing records of these calls, asked one by one; the ids billing does not know yet are left out. */
async function billedRecords(stack: TestStack, key: string, calls: CallOutcome[]): Promise<Map<string, BilledRecord>> {
  const found = new Map<string, BilledRecord>();
  for (const c of calls) {
    const res = await api(stack.baseURL, 'GET', `/billing/requests/${c.requestId}`, { key });
    if (res.status === 200) found.set(c.requestId!, res.body.data as BilledRecord);
  }
  return found;
}

/** The account's statistics over the drill: requests, errors, client errors (402s), charged micros. */
async function statistics(stack: TestStack, key: string, fromMs: number): Promise<{ requests: number; errors: number; clientErrors: number; chargedMicros: number }> {
  const from = Math.floor(fromMs / 1000) - 120;
  const to = Math.ceil(Date.now() / 1000) + 120;
  const res = await api(stack.baseURL, 'GET', `/usage?from=${from}&to=${to}&interval=hour`, { key });
  if (res.status !== 200) throw new Error(`usage: ${res.status} ${JSON.stringify(res.body)}`);
  const rows = res.body.data as { requests: number; errors: number; client_errors: number; charged_cost: string }[];
  return {
    requests: rows.reduce((s, r) => s + r.requests, 0),
    errors: rows.reduce((s, r) => s + r.errors, 0),
    clientErrors: rows.reduce((s, r) => s + r.client_errors, 0),
    chargedMicros: rows.reduce((s, r) => s + usdToMicros(r.charged_cost), 0),
  };
}

describe('broker outage under a steady chat load', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack('processes', { env: { SPEND_OVERDRAFT_ALLOWANCE_USD: ALLOWANCE_USD }, accounts: [{ id: LIMITED_ACCOUNT, credit_usd: LIMITED_CREDIT_USD }] });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  }, 30_000);

  test('every call answers or fails cleanly, and after the broker returns every served call is billed exactly once', async () => {
    const created = await api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name: 'drill limited', limit: Number(KEY_LIMIT_USD) } });
    expect(created.status).toBe(201);
    const limitedKey: string = created.body.key;
    const limitedAccountKey = stack.accountKeys[LIMITED_ACCOUNT];
    const mainBefore = await spendableMicros(stack.baseURL, stack.key);
    const limitedBefore = await spendableMicros(stack.baseURL, limitedAccountKey);
    const startedAt = Date.now();

    let phase = 'before';
    const load = startChatLoad({
      baseURL: stack.baseURL,
      deadlineMs: DEADLINE_MS,
      phase: () => phase,
      body: BODY,
      clients: [
        { name: 'main-json', key: stack.key, stream: 'never', pauseMs: 100 },
        { name: 'main-stream', key: stack.key, stream: 'always', pauseMs: 100 },
        { name: 'limited-key', key: limitedKey, stream: 'alternate', pauseMs: 300 },
        { name: 'limited-account', key: limitedAccountKey, stream: 'alternate', pauseMs: 300 },
      ],
    });
    await new Promise((r) => setTimeout(r, WARM_UP_MS));
    drillEngines.kill('kafka');
    phase = 'outage';
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    phase = 'restart';
    await drillEngines.restartKafkaInBackground();
    const brokerBackAt = Date.now();
    phase = 'after';
    await new Promise((r) => setTimeout(r, AFTER_MS));
    await load.stop();
    const outcomes = load.outcomes;

    // Every call answered or refused in the envelope, none past its deadline.
    const unclean = outcomes.filter((o) => !o.served && !o.cleanFailure);
    expect(unclean.map((o) => `${o.client} ${o.phase} ${o.status} ${o.error}`)).toEqual([]);
    const all = tally(outcomes);
    expect(all.maxDurationMs).toBeLessThan(DEADLINE_MS);
    const duringOutage = tally(outcomes.filter((o) => o.phase === 'outage'));
    // Usage waits in the outbox: the main account keeps being served while the broker is gone.
    expect(outcomes.filter((o) => o.phase === 'outage' && o.client.startsWith('main') && o.served).length).toBeGreaterThan(0);

    // After the broker returns, billing catches up on every served call.
    const served = outcomes.filter((o) => o.served);
    const byKey = new Map<string, CallOutcome[]>([
      [stack.key, served.filter((o) => o.client.startsWith('main'))],
      [limitedKey, served.filter((o) => o.client === 'limited-key')],
      [limitedAccountKey, served.filter((o) => o.client === 'limited-account')],
    ]);
    const records = new Map<string, BilledRecord>();
    await waitFor('every served call billed', async () => {
      for (const [key, calls] of byKey) {
        const missing = calls.filter((c) => !records.has(c.requestId!));
        for (const [id, r] of await billedRecords(stack, key, missing)) records.set(id, r);
      }
      return records.size === served.length;
    }, 90_000);
    const caughtUpMs = Date.now() - brokerBackAt;

    const chargedOf = (calls: CallOutcome[]) => calls.reduce((s, c) => s + usdToMicros(records.get(c.requestId!)!.charged_cost), 0);
    const mainCalls = [...byKey.get(stack.key)!, ...byKey.get(limitedKey)!];
    const mainCharged = chargedOf(mainCalls);
    const keyCharged = chargedOf(byKey.get(limitedKey)!);
    const limitedCharged = chargedOf(byKey.get(limitedAccountKey)!);
    // Exactly once: the balances moved by the sum of the records, no more (a doubled event would charge twice).
    expect(mainBefore - await spendableMicros(stack.baseURL, stack.key)).toBe(mainCharged);
    const limitedAfter = await spendableMicros(stack.baseURL, limitedAccountKey);
    expect(limitedBefore - limitedAfter).toBe(limitedCharged);
    const keyUsage = usdToMicros(String((await api(stack.baseURL, 'GET', '/key', { key: limitedKey })).body.data.usage));
    expect(keyUsage).toBe(keyCharged);

    // The statistics count the same calls and the same sum, with no errors: the only failed calls are the spend
    // refusals (402), the caller's own, counted as requests and client errors (their events go through the
    // outbox too, so they may land after the charges).
    const refused = (client: (c: string) => boolean) => outcomes.filter((o) => client(o.client) && o.status === 402).length;
    const mainRefused = refused((c) => c.startsWith('main') || c === 'limited-key');
    const limitedRefused = refused((c) => c === 'limited-account');
    const expectedMain = { requests: mainCalls.length + mainRefused, errors: 0, clientErrors: mainRefused, chargedMicros: mainCharged };
    const expectedLimited = { requests: byKey.get(limitedAccountKey)!.length + limitedRefused, errors: 0, clientErrors: limitedRefused, chargedMicros: limitedCharged };
    let mainStats = await statistics(stack, stack.key, startedAt);
    let limitedStats = await statistics(stack, limitedAccountKey, startedAt);
    await waitFor('the statistics caught up', async () => {
      [mainStats, limitedStats] = await Promise.all([statistics(stack, stack.key, startedAt), statistics(stack, limitedAccountKey, startedAt)]);
      return mainStats.requests >= expectedMain.requests && limitedStats.requests >= expectedLimited.requests;
    }, 60_000).catch(() => undefined);
    expect(mainStats).toEqual(expectedMain);
    expect(limitedStats).toEqual(expectedLimited);

    // No overspend meanwhile: the key and the small account stayed within their allowance.
    expect(keyUsage).toBeLessThanOrEqual(usdToMicros(KEY_LIMIT_USD) + usdToMicros(ALLOWANCE_USD));
    expect(limitedAfter).toBeGreaterThanOrEqual(-usdToMicros(ALLOWANCE_USD));

    reportFigures('broker-outage', {
      outage_s: Math.round((brokerBackAt - killedAt) / 1000),
      calls: all.calls,
      served: all.served,
      failed_cleanly: all.failedCleanly,
      outage_calls: duringOutage.calls,
      outage_served: duringOutage.served,
      outage_failed_cleanly: duringOutage.failedCleanly,
      failures: JSON.stringify(errorsByCode(outcomes)),
      max_call_ms: all.maxDurationMs,
      max_outage_call_ms: duringOutage.maxDurationMs,
      ledger_caught_up_ms: caughtUpMs,
      events_billed: records.size,
      charged_micros_main: mainCharged,
      charged_micros_limited_account: limitedCharged,
      key_usage_micros: keyUsage,
      key_limit_micros: usdToMicros(KEY_LIMIT_USD),
      limited_account_spendable_micros: limitedAfter,
      stats_requests: mainStats.requests + limitedStats.requests,
    });
  });
});
