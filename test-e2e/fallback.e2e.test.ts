import OpenAI from 'openai';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { spendableMicros, waitForBilledRequest } from './harness/api';
import { E2E_FALLBACK_MODEL, E2E_FALLBACK_PRICE, E2E_TIMEOUT_FALLBACK_MODEL } from './harness/catalog';
import { useStack, type StackMode } from './harness/stack';

const modes: StackMode[] = ['processes', 'embedded'];

describe.each(modes)('fallback to the next deployment (%s)', (mode) => {
  const stack = useStack(mode);

  const price = (u: { prompt_tokens: number; completion_tokens: number }) =>
    listCostMicros(deploymentPrice(E2E_FALLBACK_PRICE), tokenCounts(u));

  test('a 503 from the first deployment is absorbed; billed once at the serving deployment’s price', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const completion = await stack.openai.chat.completions.create({ model: E2E_FALLBACK_MODEL, messages: [{ role: 'user', content: 'fall back please' }] });
    expect(completion.choices[0].message.content).toEqual(expect.any(String));
    const record = await waitForBilledRequest(stack.baseURL, stack.key, completion._request_id!);
    expect(usdToMicros(record.charged_cost)).toBe(price(completion.usage!));
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - price(completion.usage!));
  });

  test('a deployment that times out is abandoned for the next; billed once at the serving price', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const started = Date.now();
    const completion = await stack.openai.chat.completions.create({ model: E2E_TIMEOUT_FALLBACK_MODEL, messages: [{ role: 'user', content: 'too slow, next' }] });
    expect(Date.now() - started).toBeLessThan(2_500); // the slow deployment would take 3 s
    const record = await waitForBilledRequest(stack.baseURL, stack.key, completion._request_id!);
    expect(usdToMicros(record.charged_cost)).toBe(price(completion.usage!));
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - price(completion.usage!));
  });

  test('a stream falls back before its first byte', async () => {
    const { data: stream, response } = await stack.openai.chat.completions.create({
      model: E2E_FALLBACK_MODEL, messages: [{ role: 'user', content: 'stream after falling back' }], stream: true, stream_options: { include_usage: true },
    }).withResponse();
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    const record = await waitForBilledRequest(stack.baseURL, stack.key, response.headers.get('x-request-id')!);
    expect(usdToMicros(record.charged_cost)).toBe(price(usage!));
  });
});
