import { randomBytes } from 'node:crypto';
import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest, type ApiResponse } from './harness/api';
import { E2E_CLAUDE_MODEL, E2E_MODEL } from './harness/catalog';
import { useStack, type StackMode, type TestStack } from './harness/stack';

/**
 * Spend limits under a burst: every call holds its worst case in billing before the provider is called, so
 * 50 concurrent calls cannot spend past a key limit or a balance by more than the allowance, however many
 * inference instances serve them, and a finished call keeps counting until billing has absorbed its usage.
 */
const ALLOWANCE_USD = '0.0005';
const BURST = 50;
// 40 one-word tokens: the echo simulators answer 41 words, so a call costs 40 x 2 + 41 x 4 = 244 micros at the
// e2e price; its hold (a third of the request's bytes as prompt tokens, plus 50 output tokens) is about 400.
const PROMPT = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
const CALL_MICROS = 244;
const chat = (extra: Record<string, unknown> = {}) => ({ model: E2E_MODEL, messages: [{ role: 'user', content: PROMPT }], max_completion_tokens: 50, ...extra });

const ENV = { SPEND_OVERDRAFT_ALLOWANCE_USD: ALLOWANCE_USD };
/** An account funded for a few calls (1,000 micros). */
const FEW_CALLS = 'acct_few_calls';

/** Sends the burst, alternating between the stack's edges when it has two. */
async function burst(stack: TestStack, key: string, path: string, body: unknown): Promise<ApiResponse[]> {
  const edges = [stack.baseURL, stack.secondBaseURL ?? stack.baseURL];
  return Promise.all(Array.from({ length: BURST }, (_, i) => api(edges[i % 2], 'POST', path, { key, body })));
}

/** Waits until billing has recorded every admitted call, so the spend read afterwards is final. */
async function settled(stack: TestStack, key: string, responses: ApiResponse[]): Promise<ApiResponse[]> {
  const admitted = responses.filter((r) => r.status === 200);
  for (const r of admitted) await waitForBilledRequest(stack.baseURL, key, r.headers.get('x-request-id')!);
  for (const r of responses.filter((x) => x.status !== 200)) expect(r.status).toBe(402);
  return admitted;
}

function burstSuite(mode: StackMode, secondInference: boolean) {
  const stack = useStack(mode, { env: ENV, accounts: [{ id: FEW_CALLS, credit_usd: '0.001' }], secondInference: secondInference ? {} : undefined });
  const limitMicros = usdToMicros('0.001');
  const allowanceMicros = usdToMicros(ALLOWANCE_USD);

  test('a key limited to 0.001 USD: 50 concurrent calls spend at most the limit plus the allowance', async () => {
    const created = await api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name: 'burst', limit: 0.001 } });
    expect(created.status).toBe(201);
    const limited: string = created.body.key;

    const responses = await burst(stack, limited, '/chat/completions', chat());
    const admitted = await settled(stack, limited, responses);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    const refused = responses.find((r) => r.status !== 200)!;
    expectEnvelope(refused, 402, 'key_limit_exceeded');

    const usage = usdToMicros(String((await api(stack.baseURL, 'GET', '/key', { key: limited })).body.data.usage));
    expect(usage).toBe(admitted.length * CALL_MICROS);
    expect(usage).toBeLessThanOrEqual(limitMicros + allowanceMicros);
  }, 120_000);

  test('a call larger than what its key has left is told its worst case and what is left, and costs nothing', async () => {
    const created = await api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name: 'small', limit: 0.001 } });
    const small: string = created.body.key;
    // No output cap: the model's 2,000 completion tokens at 4 micros each make the worst case, past 0.001 USD.
    const refused = await api(stack.baseURL, 'POST', '/chat/completions', { key: small, body: chat({ max_completion_tokens: undefined }) });
    expectEnvelope(refused, 402, 'key_limit_exceeded');
    expect(refused.body.error.message).toMatch(
      /^This call may cost up to 0\.008\d{3} USD \(its prompt and up to 2000 output tokens\), more than the 0\.001000 USD left of this key's spending limit of 0\.001000 USD; cap its output/,
    );
    expect((await api(stack.baseURL, 'GET', '/key', { key: small })).body.data).toMatchObject({ usage: 0, limit_remaining: 0.001 });
    // The same call with its output capped fits.
    expect((await api(stack.baseURL, 'POST', '/chat/completions', { key: small, body: chat() })).status).toBe(200);
  }, 60_000);

  test('an account funded for a few calls: 50 concurrent calls take it at most the allowance below zero', async () => {
    const key = stack.accountKeys[FEW_CALLS];
    const responses = await burst(stack, key, '/chat/completions', chat());
    const admitted = await settled(stack, key, responses);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    expectEnvelope(responses.find((r) => r.status !== 200)!, 402, 'insufficient_balance');
    const spendable = await spendableMicros(stack.baseURL, key);
    expect(spendable).toBe(usdToMicros('0.001') - admitted.length * CALL_MICROS);
    expect(spendable).toBeGreaterThanOrEqual(-allowanceMicros);
  }, 120_000);
}

describe.each([
  ['processes', false],
  ['embedded', false],
  ['processes', true],
] as const)('spend burst (%s mode, second inference instance: %s)', (mode, secondInference) => {
  burstSuite(mode, secondInference);
});

/**
 * Usage that never reaches billing (the bus is down between inference and billing; here the second inference
 * instance publishes to topics billing does not read). Holds are settled only by usage billing has absorbed,
 * so a finished call keeps counting for as long as the outage lasts: an account stops at its balance plus
 * the allowance, and one funded for one call gets 402 on every API once that call is in flight or done.
 */
/** Accounts funded for exactly one call: less than its real cost, more than nothing. */
const ONE_CALL = ['acct_one_chat', 'acct_one_stream', 'acct_one_responses', 'acct_one_messages'] as const;

describe('spend while usage cannot reach billing (processes mode)', () => {
  const stack = useStack('processes', {
    env: ENV,
    accounts: [...ONE_CALL.map((id) => ({ id, credit_usd: '0.00015' })), { id: 'acct_bus_down', credit_usd: '0.002' }],
    secondInference: { env: { BUS_NAMESPACE: `e2e-unread-${randomBytes(4).toString('hex')}` } },
  });
  const cases: [typeof ONE_CALL[number], string, unknown][] = [
    ['acct_one_chat', '/chat/completions', chat()],
    ['acct_one_stream', '/chat/completions', chat({ stream: true })],
    ['acct_one_responses', '/responses', { model: E2E_MODEL, input: PROMPT, max_output_tokens: 50 }],
    ['acct_one_messages', '/messages', { model: E2E_CLAUDE_MODEL, max_tokens: 50, messages: [{ role: 'user', content: PROMPT }] }],
  ];

  test.each(cases)('%s: a burst of 10 on %s serves one call, and later calls are refused while its usage is unbilled', async (account, path, body) => {
    const key = stack.accountKeys[account];
    const call = () => api(stack.secondBaseURL!, 'POST', path, { key, body });
    const responses = await Promise.all(Array.from({ length: 10 }, call));
    expect(responses.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(402)]);
    expectEnvelope(responses.find((r) => r.status === 402)!, 402, 'insufficient_balance');
    // The served call has finished; billing has not heard of it, and still it counts.
    for (let i = 0; i < 3; i++) expectEnvelope(await call(), 402, 'insufficient_balance');
  }, 60_000);

  test('50 calls are refused once the held worst cases reach the balance plus the allowance, and stay refused', async () => {
    const key = stack.accountKeys.acct_bus_down;
    const statuses: number[] = [];
    for (let round = 0; round < 10; round++) {
      const responses = await Promise.all(Array.from({ length: 5 }, () => api(stack.secondBaseURL!, 'POST', '/chat/completions', { key, body: chat() })));
      statuses.push(...responses.map((r) => r.status));
    }
    const served = statuses.filter((s) => s === 200).length;
    expect(served).toBeGreaterThanOrEqual(1);
    expect(served * CALL_MICROS).toBeLessThanOrEqual(usdToMicros('0.002') + usdToMicros(ALLOWANCE_USD));
    expect(statuses.slice(-5)).toEqual(Array(5).fill(402));
    // Billing saw none of it: the balance is untouched, the holds are what keeps the account in bounds.
    expect(await spendableMicros(stack.baseURL, key)).toBe(usdToMicros('0.002'));
  }, 120_000);
});
