import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, waitForBilledRequest } from './harness/api';
import { toFile } from 'openai';
import { E2E_BATCH_OPENAI_MODEL, E2E_MODEL, E2E_NATIVE_DROP_MODEL, E2E_NATIVE_ERROR_MODEL } from './harness/catalog';
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
  const stack = useStack('embedded', { env: { BATCH_PROVIDER_POLL_MS: '300', BATCH_POLL_MS: '200' } });

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

  it('a provider-batch line the provider answered with an error is counted as a failed call of the batch', async () => {
    const startedAt = Date.now();
    const lines = [['ok', 'a fine line'], ['bad', 'sim-error-500 this line fails']].map(([id, content]) => JSON.stringify({
      custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: E2E_BATCH_OPENAI_MODEL, messages: [{ role: 'user', content }] },
    }));
    const file = await stack.openai.files.create({ file: await toFile(Buffer.from(lines.join('\n')), 'input.jsonl'), purpose: 'batch' });
    const created = await stack.openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitFor(`batch ${created.id} done`, async () => ['completed', 'failed', 'expired'].includes((await stack.openai.batches.retrieve(created.id)).status), 90_000);
    const from = Math.floor(startedAt / 1000) - 60;
    let row: UsageRow | undefined;
    await waitFor('the batch lines counted', async () => {
      const rows = (await api(stack.baseURL, 'GET', `/usage?from=${from}&interval=hour&group_by=model,api_type`, { key: stack.key })).body.data as (UsageRow & { api_type: string })[];
      row = rows.find((r) => r.model === E2E_BATCH_OPENAI_MODEL && r.api_type === 'batch');
      return (row?.requests ?? 0) >= 2;
    }, 60_000);
    expect(row).toMatchObject({ requests: 2, errors: 1, client_errors: 0 });
    // Kept under the provider's own error code for the line.
    expect(Object.values(row!.error_kinds)).toEqual([1]);
  });
});
