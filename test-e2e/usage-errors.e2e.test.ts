import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, waitForBilledRequest } from './harness/api';
import { E2E_MODEL, E2E_NATIVE_DROP_MODEL, E2E_NATIVE_ERROR_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useStack } from './harness/stack';

jest.setTimeout(120_000);

interface UsageRow {
  model: string;
  requests: number;
  errors: number;
  client_errors: number;
  error_kinds: Record<string, number>;
  charged_cost: string;
}

describe('failed calls in the usage statistics, through the edge (embedded)', () => {
  const stack = useStack('embedded');

  it('an upstream 5xx and a stream that breaks midway are errors by kind; the broken stream is still billed', async () => {
    const startedAt = Date.now();
    const ok = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: { model: E2E_MODEL, messages: [{ role: 'user', content: 'fine' }] } });
    expect(ok.status).toBe(200);
    // Every deployment answers 500 (retried, then the fallback): the caller gets a 502, nothing is billed.
    const failed = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: { model: E2E_NATIVE_ERROR_MODEL, messages: [{ role: 'user', content: 'fail' }] } });
    expectEnvelope(failed, 502, 'upstream_error');
    // The provider cuts the stream after its first events.
    const cut = await fetch(`${stack.baseURL}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': stack.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: E2E_NATIVE_DROP_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'cut me off' }], stream: true }),
    });
    expect(cut.status).toBe(200);
    expect((await cut.text()).trim().split('\n\n').at(-1)).toMatch(/^event: error\n/);
    const cutRecord = await waitForBilledRequest(stack.baseURL, stack.key, cut.headers.get('x-request-id')!);
    expect(usdToMicros(cutRecord.charged_cost)).toBeGreaterThan(0);

    const from = Math.floor(startedAt / 1000) - 60;
    let rows: UsageRow[] = [];
    await waitFor('the failures counted', async () => {
      const res = await api(stack.baseURL, 'GET', `/usage?from=${from}&interval=hour&group_by=model`, { key: stack.key });
      rows = res.body.data as UsageRow[];
      return rows.reduce((s, r) => s + r.requests, 0) >= 3 && rows.reduce((s, r) => s + r.errors, 0) >= 2;
    }, 60_000);
    const byModel = Object.fromEntries(rows.map((r) => [r.model, r]));
    expect(byModel[E2E_MODEL]).toMatchObject({ requests: 1, errors: 0, client_errors: 0, error_kinds: {} });
    expect(byModel[E2E_NATIVE_ERROR_MODEL]).toMatchObject({ requests: 1, errors: 1, client_errors: 0, error_kinds: { upstream_error: 1 }, charged_cost: '0.000000' });
    expect(byModel[E2E_NATIVE_DROP_MODEL]).toMatchObject({ requests: 1, errors: 1, error_kinds: { stream_interrupted: 1 }, charged_cost: cutRecord.charged_cost });
    expect(Object.keys(byModel).sort()).toEqual([E2E_MODEL, E2E_NATIVE_DROP_MODEL, E2E_NATIVE_ERROR_MODEL].sort());
  });

  it("a spend refusal is the caller's: a client error, not an error", async () => {
    const startedAt = Date.now();
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.brokeKey, body: { model: E2E_MODEL, messages: [{ role: 'user', content: 'no money' }] } }), 402, 'insufficient_balance');
    const from = Math.floor(startedAt / 1000) - 60;
    let rows: UsageRow[] = [];
    await waitFor('the refusal counted', async () => {
      rows = (await api(stack.baseURL, 'GET', `/usage?from=${from}&interval=hour&group_by=model`, { key: stack.brokeKey })).body.data as UsageRow[];
      return rows.length > 0;
    }, 60_000);
    expect(rows).toEqual([expect.objectContaining({ model: E2E_MODEL, requests: 1, errors: 0, client_errors: 1, error_kinds: { insufficient_balance: 1 } })]);
  });
});
