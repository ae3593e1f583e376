import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest, type ApiResponse } from './harness/api';
import { E2E_CLAUDE_MODEL, E2E_MODEL, E2E_NATIVE_DROP_MODEL, E2E_NATIVE_ERROR_MODEL, E2E_PRICE } from './harness/catalog';
import { useStack, type StackMode } from './harness/stack';

const modes: StackMode[] = ['processes', 'embedded'];
const ANTHROPIC_VERSION = { 'anthropic-version': '2023-06-01' };

function expectedChargeMicros(usage: { input_tokens: number; output_tokens: number }): number {
  return listCostMicros(deploymentPrice(E2E_PRICE), tokenCounts(usage));
}

describe.each(modes)('POST /v1/messages through the edge (%s)', (mode) => {
  const stack = useStack(mode);
  const user = (content: string) => [{ role: 'user' as const, content }];
  /** Raw call with the key in `x-api-key`, as Anthropic clients send it. */
  const messages = (body: Record<string, unknown>, key: string | null = stack.key): Promise<ApiResponse> =>
    api(stack.baseURL, 'POST', '/messages', { body, headers: { ...ANTHROPIC_VERSION, ...(key ? { 'x-api-key': key } : {}) } });

  test('a Message passes through and is billed once, found by x-request-id and by its msg_ id', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const { data: message, response } = await stack.anthropic.messages.create({
      model: E2E_CLAUDE_MODEL, max_tokens: 256, system: 'be brief', messages: user('hello claude through the gateway'),
    }).withResponse();
    expect(message).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('hello claude through the gateway') });

    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^br-/);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    const charge = expectedChargeMicros(message.usage);
    expect(record).toMatchObject({ request_id: requestId, id: message.id, model: E2E_CLAUDE_MODEL, api_type: 'messages', streamed: false });
    expect(usdToMicros(record.charged_cost)).toBe(charge);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - charge);

    const byMessageId = await api(stack.baseURL, 'GET', `/billing/requests/${message.id}`, { key: stack.key });
    expect(byMessageId.status).toBe(200);
    expect(byMessageId.body.data.request_id).toBe(requestId);
  });

  test('messages.stream delivers the provider events and a final message, billed once', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const { data: stream, response } = await stack.anthropic.messages.stream({ model: E2E_CLAUDE_MODEL, max_tokens: 256, messages: user('stream these words back') }).withResponse();
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const final = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(final.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('stream these words back') });

    const requestId = response.headers.get('x-request-id')!;
    const record = await waitForBilledRequest(stack.baseURL, stack.key, requestId);
    expect(record).toMatchObject({ api_type: 'messages', streamed: true, id: final.id });
    expect(usdToMicros(record.charged_cost)).toBe(expectedChargeMicros(final.usage));
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - expectedChargeMicros(final.usage));
    expect((await api(stack.baseURL, 'GET', `/billing/requests/${final.id}`, { key: stack.key })).body.data.request_id).toBe(requestId);
  });

  test('a Bearer key works on /v1/messages too', async () => {
    const res = await api(stack.baseURL, 'POST', '/messages', {
      key: stack.key, headers: ANTHROPIC_VERSION, body: { model: E2E_CLAUDE_MODEL, max_tokens: 64, messages: user('bearer please') },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'message', id: expect.stringMatching(/^msg_/) });
    await waitForBilledRequest(stack.baseURL, stack.key, res.headers.get('x-request-id')!);
  });

  test('x-api-key is accepted on /v1/messages only', async () => {
    const chat = await api(stack.baseURL, 'POST', '/chat/completions', {
      headers: { 'x-api-key': stack.key }, body: { model: E2E_MODEL, messages: user('x') },
    });
    expectEnvelope(chat, 401);
  });

  test.each([
    ['no model', { model: undefined }, 'model'],
    ['no messages', { messages: [] }, 'messages'],
    ['messages not an array', { messages: 'hi' }, 'messages'],
    ['no max_tokens', { max_tokens: undefined }, 'max_tokens'],
    ['max_tokens of zero', { max_tokens: 0 }, 'max_tokens'],
    ['a fractional max_tokens', { max_tokens: 1.5 }, 'max_tokens'],
    ['max_tokens above the model limit', { max_tokens: 5000 }, 'max_tokens'],
    ['temperature above the model bound', { temperature: 1.5 }, 'temperature'],
  ])('%s is a 400 naming the param', async (_name, fields, param) => {
    expectEnvelope(await messages({ model: E2E_CLAUDE_MODEL, max_tokens: 64, messages: user('x'), ...fields }), 400, undefined, param);
  });

  test('errors come back in the spec envelope', async () => {
    const body = { model: E2E_CLAUDE_MODEL, max_tokens: 64, messages: user('x') };
    expectEnvelope(await messages(body, null), 401);
    expectEnvelope(await messages(body, 'sk-gw-v1-not-a-key'), 401);
    expectEnvelope(await messages({ ...body, model: 'no/such-model' }), 404, 'model_not_found', 'model');
    expectEnvelope(await messages({ ...body, model: E2E_MODEL }), 400, 'unsupported_api', 'model');
    expectEnvelope(await messages(body, stack.brokeKey), 402, 'insufficient_balance');
    expectEnvelope(await messages({ ...body, model: E2E_NATIVE_ERROR_MODEL }), 502, 'upstream_error');
    await expect(stack.anthropic.messages.create({ ...body, model: 'no/such-model' })).rejects.toMatchObject({ status: 404 });
  });

  test('an upstream failure after the first byte ends the stream with an error event', async () => {
    const res = await fetch(`${stack.baseURL}/messages`, {
      method: 'POST',
      headers: { 'x-api-key': stack.key, 'content-type': 'application/json', ...ANTHROPIC_VERSION },
      body: JSON.stringify({ model: E2E_NATIVE_DROP_MODEL, max_tokens: 64, messages: user('cut me off'), stream: true }),
    });
    expect(res.status).toBe(200);
    const blocks = (await res.text()).split('\n\n').filter(Boolean);
    expect(blocks[0]).toMatch(/^event: message_start\n/);
    const last = blocks.at(-1)!;
    expect(last).toMatch(/^event: error\ndata: /);
    expect(JSON.parse(last.split('\ndata: ')[1])).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
    await waitForBilledRequest(stack.baseURL, stack.key, res.headers.get('x-request-id')!);
  });
});
