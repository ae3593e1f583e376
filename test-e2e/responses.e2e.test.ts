import OpenAI from 'openai';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest, type ApiResponse } from './harness/api';
import { E2E_CLAUDE_MODEL, E2E_MODEL, E2E_NATIVE_DROP_MODEL, E2E_NATIVE_ERROR_MODEL, E2E_PRICE } from './harness/catalog';
import { useStack, type StackMode } from './harness/stack';

const modes: StackMode[] = ['processes', 'embedded'];

function expectedChargeMicros(usage: { input_tokens: number; output_tokens: number }): number {
  return listCostMicros(deploymentPrice(E2E_PRICE), tokenCounts(usage));
}

/** `event:` + `data:` blocks of a raw SSE body. */
function sseEvents(text: string): Array<{ event: string; data: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return text.split('\n\n').filter(Boolean).map((block) => {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))!.slice('event: '.length);
    return { event, data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice('data: '.length)) };
  });
}

describe.each(modes)('POST /v1/responses through the edge (%s)', (mode) => {
  const stack = useStack(mode);
  const responses = (body: Record<string, unknown>, key?: string): Promise<ApiResponse> =>
    api(stack.baseURL, 'POST', '/responses', { key: key ?? stack.key, body });

  test('a Response passes through and is billed once, found by x-request-id and by its resp_ id', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const { data: response, response: raw } = await stack.openai.responses.create({
      model: E2E_MODEL, instructions: 'be brief', input: 'hello gateway from responses', metadata: { suite: 'e2e' },
    }).withResponse();
    expect(response).toMatchObject({ object: 'response', status: 'completed', output_text: 'Echo: hello gateway from responses', metadata: { suite: 'e2e' } });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant' });
    // Stateless: the gateway asks the provider not to keep the response.
    expect((response as unknown as { store: boolean }).store).toBe(false);
    const usage = response.usage!;
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);

    const requestId = raw.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    const charge = expectedChargeMicros(usage);
    expect(record).toMatchObject({
      request_id: requestId, id: response.id, model: E2E_MODEL, api_type: 'responses', streamed: false,
      usage: { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens, prompt_tokens: usage.input_tokens, completion_tokens: usage.output_tokens },
    });
    expect(usdToMicros(record.charged_cost)).toBe(charge);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - charge);

    const byResponseId = await api(stack.baseURL, 'GET', `/billing/requests/${response.id}`, { key: stack.key });
    expect(byResponseId.status).toBe(200);
    expect(byResponseId.body.data.request_id).toBe(requestId);
  });

  test('a stream passes the provider events through, ends with response.completed, and is billed once', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const { data: stream, response: raw } = await stack.openai.responses.create({ model: E2E_MODEL, input: 'stream these words back', stream: true }).withResponse();
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_item.added');
    expect(types.at(-1)).toBe('response.completed');
    expect(text).toBe('Echo: stream these words back');
    const usage = completed!.usage!;

    const requestId = raw.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^br-/);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    expect(record).toMatchObject({ api_type: 'responses', streamed: true, id: completed!.id });
    expect(usdToMicros(record.charged_cost)).toBe(expectedChargeMicros(usage));
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - expectedChargeMicros(usage));
    expect((await api(stack.baseURL, 'GET', `/billing/requests/${completed!.id}`, { key: stack.key })).body.data.request_id).toBe(requestId);
  });

  test.each([
    ['previous_response_id', 'resp_earlier'],
    ['conversation', 'conv_123'],
    ['background', true],
    ['store', true],
  ])('%s needs stored state: 501 unsupported_feature naming it', async (param, value) => {
    expectEnvelope(await responses({ model: E2E_MODEL, input: 'x', [param]: value }), 501, 'unsupported_feature', param);
  });

  test('retrieving, listing input items of and cancelling a response are 501 unsupported_feature', async () => {
    for (const [method, path] of [['GET', '/responses/resp_abc'], ['GET', '/responses/resp_abc/input_items'], ['POST', '/responses/resp_abc/cancel']]) {
      expectEnvelope(await api(stack.baseURL, method, path, { key: stack.key }), 501, 'unsupported_feature');
    }
    await expect(stack.openai.responses.retrieve('resp_abc')).rejects.toMatchObject({ status: 501 });
  });

  test.each([
    ['more than 16 metadata pairs', { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    ['a metadata value that is not a string', { metadata: { team: 7 } }, 'metadata.team'],
    ['temperature above 2', { temperature: 2.5 }, 'temperature'],
    ['temperature below 0', { temperature: -0.1 }, 'temperature'],
    ['top_logprobs above 20', { top_logprobs: 21 }, 'top_logprobs'],
    ['top_logprobs below 0', { top_logprobs: -1 }, 'top_logprobs'],
    ['no model', { model: undefined }, 'model'],
    ['input neither string nor array', { input: 42 }, 'input'],
    ['an input item with an unknown role', { input: [{ role: 'wizard', content: 'x' }] }, 'input[0].role'],
    ['an unknown truncation', { truncation: 'sometimes' }, 'truncation'],
    ['an unknown service_tier', { service_tier: 'gold' }, 'service_tier'],
    ['an unknown prompt_cache_retention', { prompt_cache_retention: '1h' }, 'prompt_cache_retention'],
    ['an unknown reasoning.effort', { reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    ['an unknown text.verbosity', { text: { verbosity: 'loud' } }, 'text.verbosity'],
    ['an unknown tool_choice', { tool_choice: 'always' }, 'tool_choice'],
    ['max_output_tokens above the model limit', { max_output_tokens: 5000 }, 'max_output_tokens'],
    ['temperature above the model bound', { model: E2E_NATIVE_DROP_MODEL, temperature: 1.5 }, 'temperature'],
  ])('%s is a 400 naming the param', async (_name, fields, param) => {
    expectEnvelope(await responses({ model: E2E_MODEL, input: 'x', ...fields }), 400, undefined, param);
  });

  test('errors come back in the spec envelope', async () => {
    expectEnvelope(await api(stack.baseURL, 'POST', '/responses', { body: { model: E2E_MODEL, input: 'x' } }), 401);
    expectEnvelope(await responses({ model: 'no/such-model', input: 'x' }), 404, 'model_not_found', 'model');
    expectEnvelope(await responses({ model: E2E_CLAUDE_MODEL, input: 'x' }), 400, 'unsupported_api', 'model');
    expectEnvelope(await responses({ model: E2E_MODEL, input: 'x' }, stack.brokeKey), 402, 'insufficient_balance');
    expectEnvelope(await api(stack.baseURL, 'POST', '/responses', { key: stack.key, rawBody: '{"model": ' }), 400);
    await expect(stack.openai.responses.create({ model: 'no/such-model', input: 'x' })).rejects.toMatchObject({ status: 404 });
  });

  test('an upstream failure before the first byte is an error response, streamed or not', async () => {
    expectEnvelope(await responses({ model: E2E_NATIVE_ERROR_MODEL, input: 'x' }), 502, 'upstream_error');
    expectEnvelope(await responses({ model: E2E_NATIVE_ERROR_MODEL, input: 'x', stream: true }), 502, 'upstream_error');
  });

  test('an upstream failure after the first byte ends the stream with an OpenAI error event', async () => {
    const res = await fetch(`${stack.baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: E2E_NATIVE_DROP_MODEL, input: 'cut me off', stream: true }),
    });
    expect(res.status).toBe(200);
    const events = sseEvents(await res.text());
    expect(events[0].event).toBe('response.created');
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', code: expect.any(String), message: expect.any(String), param: null, sequence_number: events.length - 1 },
    });
    // Still one usage record for the call, with what the provider reported (nothing, here).
    const record = await waitForBilledRequest(stack.baseURL, stack.key, res.headers.get('x-request-id')!);
    expect(record).toMatchObject({ api_type: 'responses', streamed: true, charged_cost: expect.any(String) });
  });
});
