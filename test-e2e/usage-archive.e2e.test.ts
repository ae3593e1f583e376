import OpenAI from 'openai';
import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, waitForBilledRequest, type ApiResponse } from './harness/api';
import { E2E_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useStack, type StackMode } from './harness/stack';

const modes: StackMode[] = ['processes', 'embedded'];
const USER = 'acct_usage_e2e';
const OTHER = 'acct_usage_other';

describe.each(modes)('usage statistics and the call archive through the edge (%s)', (mode) => {
  const stack = useStack(mode, { accounts: [{ id: USER, credit_usd: '5' }, { id: OTHER, credit_usd: '5' }] });
  const client = () => new OpenAI({ apiKey: stack.accountKeys[USER], baseURL: stack.baseURL, maxRetries: 0 });
  const calls: { requestId: string; providerId: string; model: string }[] = [];
  let streamed: { requestId: string; text: string; prompt: string };
  let startedAt: number;

  async function archiveOf(id: string, key: string): Promise<ApiResponse> {
    let res!: ApiResponse;
    await waitFor(`archive of ${id}`, async () => {
      res = await api(stack.baseURL, 'GET', `/billing/requests/${encodeURIComponent(id)}/archive`, { key });
      return res.status === 200;
    }, 30_000);
    return res;
  }

  beforeAll(async () => {
    startedAt = Date.now();
    const openai = client();
    const unary = await openai.chat.completions.create({ model: E2E_MODEL, messages: [{ role: 'user', content: 'count me in the statistics' }] });
    calls.push({ requestId: unary._request_id!, providerId: unary.id, model: E2E_MODEL });

    const prompt = 'stream and archive these words';
    const { data: stream, response } = await openai.chat.completions.create({
      model: E2E_MODEL, messages: [{ role: 'user', content: prompt }], stream: true, stream_options: { include_usage: true },
    }).withResponse();
    let text = '';
    let providerId = '';
    for await (const chunk of stream) {
      providerId ||= chunk.id;
      for (const c of chunk.choices) text += c.delta.content ?? '';
    }
    streamed = { requestId: response.headers.get('x-request-id')!, text, prompt };
    calls.push({ requestId: streamed.requestId, providerId, model: E2E_MODEL });

    const answer = await openai.responses.create({ model: E2E_MODEL, input: 'a responses call, archived too' });
    calls.push({ requestId: answer._request_id!, providerId: answer.id, model: E2E_MODEL });
  }, 60_000);

  test('the usage query for the day matches the ledger exactly, per model', async () => {
    const key = stack.accountKeys[USER];
    let ledgerMicros = 0;
    for (const c of calls) ledgerMicros += usdToMicros((await waitForBilledRequest(stack.baseURL, key, c.requestId)).charged_cost);
    expect(ledgerMicros).toBeGreaterThan(0);

    const from = Math.floor(startedAt / 1000) - 60;
    const to = Math.ceil(Date.now() / 1000) + 60;
    const res = await api(stack.baseURL, 'GET', `/usage?from=${from}&to=${to}&interval=hour&group_by=model,api_type`, { key });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    const rows = res.body.data as { model: string; api_type: string; requests: number; errors: number; charged_cost: string; list_cost: string; latency_ms_p50: number }[];
    expect(rows.every((r) => r.model === E2E_MODEL)).toBe(true);
    expect(rows.reduce((s, r) => s + r.requests, 0)).toBe(3);
    expect(rows.reduce((s, r) => s + r.errors, 0)).toBe(0);
    expect(rows.reduce((s, r) => s + usdToMicros(r.charged_cost), 0)).toBe(ledgerMicros);
    expect(new Set(rows.map((r) => r.api_type))).toEqual(new Set(['chat', 'responses']));
    expect(rows.every((r) => typeof r.latency_ms_p50 === 'number')).toBe(true);

    // The other account's statistics hold none of these calls.
    const other = await api(stack.baseURL, 'GET', `/usage?from=${from}&to=${to}&interval=hour`, { key: stack.accountKeys[OTHER] });
    expect(other.body.data).toEqual([]);
  });

  test('bad usage parameters are a 400 naming the parameter', async () => {
    expectEnvelope(await api(stack.baseURL, 'GET', '/usage?interval=fortnight', { key: stack.accountKeys[USER] }), 400, undefined, 'interval');
    expectEnvelope(await api(stack.baseURL, 'GET', '/usage?group_by=colour', { key: stack.accountKeys[USER] }), 400, undefined, 'group_by');
  });

  test('the archive of a streamed call holds the request and the reassembled response', async () => {
    const { body } = await archiveOf(streamed.requestId, stack.accountKeys[USER]);
    expect(body.data).toMatchObject({ request_id: streamed.requestId, streamed: true, truncated: false, api_type: 'chat', model: E2E_MODEL });
    expect(body.data.request.messages).toEqual([{ role: 'user', content: streamed.prompt }]);
    expect(body.data.response.object).toBe('chat.completion');
    expect(body.data.response.choices[0].message.content).toBe(streamed.text);
    expect(JSON.stringify(body.data)).not.toContain(stack.accountKeys[USER]);
  });

  test('the archive is found by the provider id too, for the unary and the responses call', async () => {
    for (const c of [calls[0], calls[2]]) {
      const { body } = await archiveOf(c.providerId, stack.accountKeys[USER]);
      expect(body.data.request_id).toBe(c.requestId);
      expect(body.data.streamed).toBe(false);
      expect(body.data.response.id).toBe(c.providerId);
    }
  });

  test("another account asking for this account's archive gets a 404", async () => {
    await archiveOf(streamed.requestId, stack.accountKeys[USER]);
    const res = await api(stack.baseURL, 'GET', `/billing/requests/${streamed.requestId}/archive`, { key: stack.accountKeys[OTHER] });
    expectEnvelope(res, 404, 'archive_not_found', 'request_id');
  });
});
