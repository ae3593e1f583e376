import OpenAI from 'openai';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { waitForBilledRequest } from './harness/api';
import { E2E_FORMATS, E2E_PRICE, formatModel } from './harness/catalog';
import { useStack } from './harness/stack';

/**
 * One OpenAI client, three upstream wire formats: switching providers changes only the model name.
 * Embedded mode keeps this matrix fast; the processes mode is covered by chat-billing.
 */
describe('chat completions against each provider format (embedded)', () => {
  const stack = useStack('embedded');

  const priced = (u: { prompt_tokens: number; completion_tokens: number }) =>
    listCostMicros(deploymentPrice(E2E_PRICE), tokenCounts(u));

  const weather: OpenAI.ChatCompletionTool = {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } },
  };

  describe.each(E2E_FORMATS.map((f) => f.format))('%s', (format) => {
    test('text, usage normalized, billed once', async () => {
      const completion = await stack.openai.chat.completions.create({
        model: formatModel(format, 'echo'),
        messages: [{ role: 'system', content: 'You echo.' }, { role: 'user', content: 'hello from every provider' }],
      });
      expect(completion.choices[0].message.content).toContain('hello from every provider');
      expect(completion.choices[0].finish_reason).toBe('stop');
      const u = completion.usage!;
      expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
      const record = await waitForBilledRequest(stack.baseURL, stack.key, completion._request_id!);
      expect(usdToMicros(record.charged_cost)).toBe(priced(u));
    });

    test('tool calls, non-streaming', async () => {
      const completion = await stack.openai.chat.completions.create({
        model: formatModel(format, 'tools'),
        messages: [{ role: 'user', content: 'weather in Paris' }],
        tools: [weather],
      });
      const choice = completion.choices[0];
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual(expect.any(Object));
      await waitForBilledRequest(stack.baseURL, stack.key, completion._request_id!);
    });

    test('tool calls, streaming deltas assemble into the call', async () => {
      const stream = await stack.openai.chat.completions.create({
        model: formatModel(format, 'tools'),
        messages: [{ role: 'user', content: 'weather in Oslo' }],
        tools: [weather],
        stream: true,
        stream_options: { include_usage: true },
      });
      let name = '';
      let args = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        for (const c of chunk.choices) {
          for (const t of c.delta.tool_calls ?? []) {
            name += t.function?.name ?? '';
            args += t.function?.arguments ?? '';
          }
          finish = c.finish_reason ?? finish;
        }
        usage = chunk.usage ?? usage;
      }
      expect(name).toBe('get_weather');
      expect(JSON.parse(args)).toEqual(expect.any(Object));
      expect(finish).toBe('tool_calls');
      expect(usage!.completion_tokens).toBeGreaterThan(0);
    });

    test('json_schema answers parse as JSON', async () => {
      const completion = await stack.openai.chat.completions.create({
        model: formatModel(format, 'echo'),
        messages: [{ role: 'user', content: 'give me json' }],
        response_format: { type: 'json_schema', json_schema: { name: 'echo', schema: { type: 'object', properties: { echo: { type: 'string' } } } } },
      });
      expect(JSON.parse(completion.choices[0].message.content!)).toEqual(expect.any(Object));
    });

    test('a text stream with usage', async () => {
      const stream = await stack.openai.chat.completions.create({
        model: formatModel(format, 'echo'),
        messages: [{ role: 'user', content: 'stream it back' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      expect(text).toContain('stream it back');
      expect(usage!.total_tokens).toBe(usage!.prompt_tokens + usage!.completion_tokens);
    });
  });
});
