import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { TOPICS, type UsageEvent } from '@gw/proto';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest } from './harness/api';
import { E2E_MODEL, E2E_PRICE } from './harness/catalog';
import { useStack, type StackMode } from './harness/stack';

const modes: StackMode[] = ['processes', 'embedded'];

function expectedChargeMicros(usage: { prompt_tokens: number; completion_tokens: number }): number {
  return listCostMicros(deploymentPrice(E2E_PRICE), tokenCounts(usage));
}

describe.each(modes)('chat through the edge, billed once (%s)', (mode) => {
  const stack = useStack(mode);

  test('a chat completion is served, and the balance falls by exactly the priced amount', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const completion = await stack.openai.chat.completions.create({
      model: E2E_MODEL,
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello gateway from the e2e suite' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message.role).toBe('assistant');
    expect(completion.choices[0].message.content).toEqual(expect.any(String));
    expect(completion.choices[0].finish_reason).toBe('stop');
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);

    const requestId = completion._request_id!;
    expect(requestId).toMatch(/^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    const charge = expectedChargeMicros(usage);
    expect(record).toMatchObject({
      request_id: requestId,
      id: completion.id,
      model: E2E_MODEL,
      api_type: 'chat',
      streamed: false,
      usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens },
    });
    expect(usdToMicros(record.charged_cost)).toBe(charge);
    expect(usdToMicros(record.list_cost)).toBe(charge);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - charge);

    // The provider-facing id resolves to the same record.
    const byProviderId = await api(stack.baseURL, 'GET', `/billing/requests/${completion.id}`, { key: stack.key });
    expect(byProviderId.status).toBe(200);
    expect(byProviderId.body.data.request_id).toBe(requestId);
  });

  test('a stream delivers chunks, a final usage chunk and [DONE], and is billed once', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const { data: stream, response } = await stack.openai.chat.completions.create({
      model: E2E_MODEL,
      messages: [{ role: 'user', content: 'stream these words back to me please' }],
      stream: true,
      stream_options: { include_usage: true },
    }).withResponse();
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        finish = c.finish_reason ?? finish;
      }
      if (chunk.usage) {
        expect(chunk.choices).toEqual([]);
        usage = chunk.usage;
      }
    }
    expect(text.length).toBeGreaterThan(0);
    expect(finish).toBe('stop');
    expect(usage!.completion_tokens).toBeGreaterThan(0);

    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^br-/);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    expect(record.streamed).toBe(true);
    expect(usdToMicros(record.charged_cost)).toBe(expectedChargeMicros(usage!));
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - expectedChargeMicros(usage!));
  });

  test('without include_usage the stream carries no usage', async () => {
    const res = await fetch(`${stack.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: E2E_MODEL, messages: [{ role: 'user', content: 'no usage please' }], stream: true }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = await res.text();
    const events = body.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    for (const e of events.slice(0, -1)) expect(JSON.parse(e.slice('data: '.length)).usage ?? null).toBeNull();
    await waitForBilledRequest(stack.baseURL, stack.key, res.headers.get('x-request-id')!);
  });

  test('a redelivered usage event changes nothing', async () => {
    const completion = await stack.openai.chat.completions.create({ model: E2E_MODEL, messages: [{ role: 'user', content: 'bill me once' }] });
    const record = await waitForBilledRequest(stack.baseURL, stack.key, completion._request_id!);
    const before = await spendableMicros(stack.baseURL, stack.key);

    const base: UsageEvent = {
      request_id: record.request_id, account_id: stack.accountId, media_ids: [], key_hash: record.key_hash, model: E2E_MODEL,
      provider: 'simulator', deployment: 'e2e-simulator', api_type: 'chat', provider_response_id: completion.id,
      served_model: completion.model, streamed: false, cancelled: false, finish_reason: 'stop', status: 'succeeded', hold_id: '', hold_micros: 0, trace_id: '',
      usage: { prompt_tokens: completion.usage!.prompt_tokens, completion_tokens: completion.usage!.completion_tokens } as UsageEvent['usage'],
      latency_ms: 1, generation_time_ms: 1, created_at_ms: Date.now(), usage_estimated: false,
    };
    // The duplicate, then a zero-cost marker with the same key: per-key order means once the marker is
    // recorded, the duplicate has been consumed.
    const marker = { ...base, request_id: `br-${randomUUID()}`, provider_response_id: `marker-${randomUUID()}`, usage: { prompt_tokens: 0, completion_tokens: 0 } as UsageEvent['usage'] };
    await stack.bus.publish(TOPICS.usage, [{ key: stack.accountId, value: base }, { key: stack.accountId, value: marker }]);
    await waitForBilledRequest(stack.baseURL, stack.key, marker.request_id);

    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before);
    const again = await api(stack.baseURL, 'GET', `/billing/requests/${record.request_id}`, { key: stack.key });
    expect(again.body.data.charged_cost).toBe(record.charged_cost);
  });

  test('a client X-Request-ID never becomes the request_id', async () => {
    const clientId = `br-${randomUUID()}`;
    const res = await api(stack.baseURL, 'POST', '/chat/completions', {
      key: stack.key,
      headers: { 'x-request-id': clientId },
      body: { model: E2E_MODEL, messages: [{ role: 'user', content: 'whose id is it' }] },
    });
    expect(res.status).toBe(200);
    const platformId = res.headers.get('x-request-id')!;
    expect(platformId).toMatch(/^br-/);
    expect(platformId).not.toBe(clientId);
    await waitForBilledRequest(stack.baseURL, stack.key, platformId);
    expectEnvelope(await api(stack.baseURL, 'GET', `/billing/requests/${clientId}`, { key: stack.key }), 404);
  });

  test('errors come back in the spec envelope with the right status', async () => {
    const chat = { model: E2E_MODEL, messages: [{ role: 'user', content: 'hi' }] };
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { body: chat }), 401);
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: 'sk-gw-v1-not-a-key', body: chat }), 401);
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: { ...chat, model: 'no/such-model' } }), 404, 'model_not_found', 'model');
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: { model: E2E_MODEL } }), 400, undefined, 'messages');
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: { ...chat, messages: [{ role: 'wizard', content: 'x' }] } }), 400, undefined, 'messages[0].role');
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: { ...chat, temperature: 7 } }), 400, undefined, 'temperature');
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, rawBody: '{"model": ' }), 400);
    expectEnvelope(await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.brokeKey, body: chat }), 402, 'insufficient_balance');
    expectEnvelope(await api(stack.baseURL, 'GET', '/no/such/route', { key: stack.key }), 404);

    // The SDK surfaces the same statuses.
    await expect(stack.openai.chat.completions.create({ model: 'no/such-model', messages: [{ role: 'user', content: 'x' }] }))
      .rejects.toMatchObject({ status: 404 });
  });

  test('the model catalogue needs no key and carries every Model field', async () => {
    const anon = new OpenAI({ apiKey: 'unused', baseURL: stack.baseURL });
    const list = await api(stack.baseURL, 'GET', '/models');
    expect(list.status).toBe(200);
    const model = list.body.data.find((m: { id: string }) => m.id === E2E_MODEL);
    expect(Object.keys(model).sort()).toEqual([
      'architecture', 'canonical_slug', 'context_length', 'created', 'default_parameters', 'description', 'expiration_date',
      'id', 'knowledge_cutoff', 'links', 'model_hub_id', 'name', 'object', 'owned_by', 'parameter_schema', 'per_request_limits',
      'supported_parameters', 'supported_voices',
    ]);
    expect(model.canonical_slug).toBe(E2E_MODEL);
    expect(model.parameter_schema.temperature).toEqual({ type: 'number', options: null, default: 1, min: 0, max: 2 });
    const one = await anon.models.retrieve(E2E_MODEL);
    expect(one.id).toBe(E2E_MODEL);
    expectEnvelope(await api(stack.baseURL, 'GET', '/models/no/such-model'), 404, 'model_not_found');
  });
});
