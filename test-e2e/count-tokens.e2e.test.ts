import Anthropic from '@anthropic-ai/sdk';
import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest } from './harness/api';
import { E2E_CLAUDE_MODEL, E2E_MODEL } from './harness/catalog';
import { useStack } from './harness/stack';

const ANTHROPIC_VERSION = { 'anthropic-version': '2023-06-01' };

describe('POST /v1/messages/count_tokens through the edge', () => {
  const stack = useStack('processes');
  const user = (content: string) => [{ role: 'user' as const, content }];

  test("the Anthropic SDK's countTokens gets the provider's count, the one a message with that prompt is billed for, free", async () => {
    const prompt = { model: E2E_CLAUDE_MODEL, system: 'be brief', messages: user('how many tokens are in this prompt') };
    const before = await spendableMicros(stack.baseURL, stack.key);
    const counted = await stack.anthropic.messages.countTokens(prompt);
    expect(counted).toEqual({ input_tokens: expect.any(Number) });
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before);

    const { data: message, response } = await stack.anthropic.messages.create({ ...prompt, max_tokens: 32 }).withResponse();
    expect(counted.input_tokens).toBe(message.usage.input_tokens);
    // Usage events of one account are applied in order: once the message is billed, a charge for the count would have landed too.
    const record = await waitForBilledRequest(stack.baseURL, stack.key, response.headers.get('x-request-id')!);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - usdToMicros(record.charged_cost));
  });

  test('x-api-key and Bearer are both accepted; no key is a 401', async () => {
    const body = { model: E2E_CLAUDE_MODEL, messages: user('count me') };
    const viaXApiKey = await api(stack.baseURL, 'POST', '/messages/count_tokens', { headers: { ...ANTHROPIC_VERSION, 'x-api-key': stack.key }, body });
    expect(viaXApiKey.status).toBe(200);
    const viaBearer = await api(stack.baseURL, 'POST', '/messages/count_tokens', { key: stack.key, headers: ANTHROPIC_VERSION, body });
    expect(viaBearer.body).toEqual(viaXApiKey.body);
    expectEnvelope(await api(stack.baseURL, 'POST', '/messages/count_tokens', { headers: ANTHROPIC_VERSION, body }), 401);
  });

  test.each([
    ['no messages', { model: E2E_CLAUDE_MODEL, messages: [] }, 'messages'],
    ['a bad role', { model: E2E_CLAUDE_MODEL, messages: [{ role: 'system', content: 'x' }] }, 'messages[0].role'],
    ['a model not served through the messages API', { model: E2E_MODEL, messages: user('x') }, 'model'],
  ])('%s is a 400 naming the param', async (_name, body, param) => {
    const res = await api(stack.baseURL, 'POST', '/messages/count_tokens', { key: stack.key, headers: ANTHROPIC_VERSION, body });
    expectEnvelope(res, 400, undefined, param);
  });

  test('the SDK sees a refusal as its own error class', async () => {
    await expect(stack.anthropic.messages.countTokens({ model: 'e2e/no-such-model', messages: user('x') })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });
});
