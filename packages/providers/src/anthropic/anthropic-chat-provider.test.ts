import { GatewayError, InputError, NotFoundError, RateLimitError, TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type ChatCompletionRequest } from '@gw/provider-spec';
import { SNAPSHOT_SUFFIX, startAnthropicSimulator } from '../../../simulators/src';
import { createChatProvider } from '../create-chat-provider';
import { itMapsTransportFailures } from '../testing/chat-transport';
import { expectTypedFailure } from '../testing/collect';
import { AnthropicChatProvider } from './anthropic-chat-provider';
import { ANTHROPIC_VERSION } from './anthropic-http';
import { useAnthropicChatUpstream } from './fixtures/simulator-fixtures';
import * as recorded from './fixtures/recorded-anthropic-shapes';

const user = (content: string): ChatCompletionRequest['messages'] => [{ role: 'user', content }];
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };

describe('AnthropicChatProvider against the Anthropic simulator', () => {
  const up = useAnthropicChatUpstream();
  const { withModel } = up;

  it('is what the factory creates for kind "anthropic"', async () => {
    const created = createChatProvider('anthropic');
    expect(created).toBeInstanceOf(AnthropicChatProvider);
    expect(created.kind).toBe('anthropic');
    await created.close?.();
  });

  describe('chat', () => {
    it('answers with the served model, the message id, normalized usage and the request id', async () => {
      const { completion, usage } = await up.provider.chat({ model: 'acme/claude', messages: [{ role: 'system', content: 'be nice' }, ...user('hello there')] }, up.target);
      expect(completion).toEqual({
        id: expect.stringMatching(/^msg_sim/),
        object: 'chat.completion',
        created: expect.any(Number),
        model: `claude-sonnet-4-5${SNAPSHOT_SUFFIX}`,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello there' }, logprobs: null, finish_reason: 'stop' }],
        usage,
      });
      expect(usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, provider_request_id: expect.stringMatching(/^req_sim/) });
    });

    it('sends the credential, the API version and the converted body', async () => {
      await up.provider.chat({ model: 'x', messages: [{ role: 'system', content: 'sys' }, ...user('hi')], stop: 'END', extra_body: { metadata: { user_id: 'u1' } } }, withModel('claude-x', { extraHeaders: { 'Anthropic-Beta': 'beta-1' } }));
      const { headers, body } = up.sim.lastRequest!;
      expect(headers).toMatchObject({ 'x-api-key': 'sk-ant-upstream', 'anthropic-version': ANTHROPIC_VERSION, 'anthropic-beta': 'beta-1', 'content-type': 'application/json' });
      expect(headers.authorization).toBeUndefined();
      expect(JSON.parse(body)).toEqual({ model: 'claude-x', max_tokens: 4096, system: 'sys', messages: [{ role: 'user', content: 'hi' }], stop_sequences: ['END'], metadata: { user_id: 'u1' } });
    });

    it.each([
      ['the cap cuts the answer', { max_completion_tokens: 2 }, 'Echo: a', 'length'],
      ['a stop sequence ends it', { stop: ['d'] }, 'Echo: a b c', 'stop'],
    ])('reports the finish reason when %s', async (_name, extra, content, finishReason) => {
      const { completion } = await up.provider.chat({ model: 'x', messages: user('a b c d'), ...extra }, up.target);
      expect(completion.choices[0]).toMatchObject({ message: { content }, finish_reason: finishReason });
    });

    it('answers a tool call with the input as JSON arguments', async () => {
      const { completion } = await up.provider.chat({ model: 'x', messages: user('cats'), tools: [weather] }, withModel('sim-tools'));
      expect(completion.choices[0]).toEqual({
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: [{ id: expect.stringMatching(/^toolu_/), type: 'function', function: { name: 'get_weather', arguments: '{"query":"cats"}' } }] },
        logprobs: null,
        finish_reason: 'tool_calls',
      });
    });

    it('answers a json_schema response_format through the forced tool as JSON content', async () => {
      const response_format = { type: 'json_schema' as const, json_schema: { name: 'lookup', schema: { type: 'object', properties: { query: { type: 'string' } } } } };
      const { completion } = await up.provider.chat({ model: 'x', messages: user('dogs'), response_format }, up.target);
      expect(completion.choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: '{"query":"dogs"}' }, logprobs: null, finish_reason: 'stop' });
      expect(JSON.parse(up.sim.lastRequest!.body).tool_choice).toEqual({ type: 'tool', name: 'lookup' });
    });

    it('reports a refusal in message.refusal with null content', async () => {
      const { completion } = await up.provider.chat({ model: 'x', messages: user('bad idea') }, withModel('sim-refusal'));
      expect(completion.choices[0]).toMatchObject({ message: { role: 'assistant', content: null, refusal: expect.any(String) }, finish_reason: 'stop' });
    });

    it.each([
      ['returned', {}, 'Considering: think hard'],
      ['excluded', { exclude: true }, undefined],
    ])('returns thinking text as reasoning unless excluded: %s', async (_name, extra, reasoning) => {
      const { completion } = await up.provider.chat({ model: 'x', messages: user('think hard'), reasoning: { effort: 'low', ...extra } }, up.target);
      expect(completion.choices[0].message).toEqual({ role: 'assistant', content: 'Echo: think hard', ...(reasoning ? { reasoning } : {}) });
      expect(JSON.parse(up.sim.lastRequest!.body).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    });

    it.each([
      ['text message', 'text-message', recorded.textMessage.id, { content: 'Hi! My name is Claude.' }, 'stop', { prompt_tokens: 2363, completion_tokens: 9, total_tokens: 2372 }],
      [
        'tool use message',
        'tool-use-message',
        recorded.toolUseMessage.id,
        { content: "I'll check the current weather in San Francisco for you.", tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' } }] },
        'tool_calls',
        { prompt_tokens: 384, completion_tokens: 92, total_tokens: 476 },
      ],
      ['thinking message', 'thinking-message', recorded.thinkingMessage.id, { content: 'The GCD of 1071 and 462 is 21.', reasoning: 'To find the GCD, use the Euclidean algorithm.' }, 'stop', { prompt_tokens: 40, completion_tokens: 120, total_tokens: 160 }],
      ['refusal message', 'refusal-message', recorded.refusalMessage.id, { content: null, refusal: "I can't help with that request." }, 'stop', { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 }],
    ])('converts a recorded %s', async (_name, fixture, id, message, finishReason, usage) => {
      const req: ChatCompletionRequest = { model: 'x', messages: user('hi'), reasoning: { max_tokens: 1024 } };
      const { completion, usage: got } = await up.provider.chat(req, withModel(`sim-fixture-${fixture}`));
      expect(completion.id).toBe(id);
      expect(completion.model).toBe('claude-sonnet-4-5-20250929');
      expect(completion.choices[0]).toEqual({ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason });
      expect(got).toEqual({ ...usage, provider_request_id: 'req_recorded' });
    });
  });

  describe('unsupported parameters', () => {
    it.each([
      ['logprobs', { logprobs: true }],
      ['n', { n: 3 }],
      ['seed', { seed: 7 }],
    ])('%s is a 400 naming the parameter, before any upstream call', async (param, extra) => {
      const before = up.sim.requests;
      for (const method of ['chat', 'chatStream'] as const) {
        const err = await up.provider[method]({ model: 'x', messages: user('hi'), ...extra }, up.target).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(InputError);
        expect(err).toMatchObject({ status: 400, param });
        expect(isRetryableUpstreamError(err)).toBe(false);
      }
      expect(up.sim.requests).toBe(before);
    });
  });

  describe('upstream failures', () => {
    const failures: Array<[string, string, new (...args: never[]) => GatewayError, Record<string, unknown>, boolean]> = [
      ['simulated 400', 'sim-error-400', InputError, { status: 400, message: expect.stringContaining('simulated invalid request') }, false],
      ['recorded prompt too long 400', 'sim-fixture-prompt-too-long-400', InputError, { status: 400, message: expect.stringContaining('prompt is too long') }, false],
      ['recorded credit balance 400', 'sim-fixture-credit-balance-400', UpstreamError, { status: 502, code: 'upstream_insufficient_balance' }, false],
      ['simulated 401', 'sim-error-401', UpstreamError, { status: 502, code: 'upstream_auth_error', upstreamStatus: 401 }, false],
      ['recorded invalid key 401', 'sim-fixture-invalid-key-401', UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
      ['simulated 403', 'sim-error-403', UpstreamError, { status: 502, code: 'upstream_auth_error', upstreamStatus: 403 }, false],
      ['recorded 404', 'sim-fixture-not-found-404', NotFoundError, { status: 404, code: 'model_not_found', param: 'model' }, false],
      ['simulated 429', 'sim-error-429', RateLimitError, { status: 429, headers: { 'retry-after': '1' } }, true],
      ['recorded rate limit 429', 'sim-fixture-rate-limit-429', RateLimitError, { status: 429, headers: { 'retry-after': '20' } }, true],
      ['simulated 500', 'sim-error-500', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 500 }, true],
      ['recorded api error 500', 'sim-fixture-api-error-500', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 500 }, true],
      ['HTML 502', 'sim-fixture-html-502', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 502 }, true],
      ['simulated 529 overloaded', 'sim-error-529', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 529 }, true],
      ['recorded 529 overloaded', 'sim-fixture-overloaded-529', UpstreamError, { status: 502, upstreamStatus: 529 }, true],
      ['simulated 504', 'sim-error-504', TimeoutError, { status: 504 }, true],
      ['malformed 200 message', 'sim-fixture-malformed-message', UpstreamError, { status: 502, message: expect.stringContaining('malformed') }, false],
      ['non-JSON 200 message', 'sim-fixture-not-json-message', UpstreamError, { status: 502, message: expect.stringContaining('malformed') }, false],
      ['dropped connection', 'sim-drop', UpstreamError, { status: 502, code: 'upstream_error' }, true],
    ];

    it.each(failures)('chat: %s', async (_name, model, type, fields, retryable) => {
      const err = await up.provider.chat({ model: 'x', messages: user('hi') }, withModel(model)).catch((e: unknown) => e);
      expectTypedFailure(err, type, fields, retryable);
    });

    it.each(failures.filter(([, model]) => !model.includes('message') && model !== 'sim-drop'))('chatStream throws before the first chunk: %s', async (_name, model, type, fields, retryable) => {
      const err = await up.provider.chatStream({ model: 'x', messages: user('hi'), stream: true }, withModel(model)).catch((e: unknown) => e);
      expectTypedFailure(err, type, fields, retryable);
    });

    it('keeps upstream messages of credential failures to itself', async () => {
      const err = await up.provider.chat({ model: 'x', messages: user('hi') }, withModel('sim-error-401')).catch((e: unknown) => e);
      expect((err as Error).message).not.toContain('x-api-key');
    });

    it('reports a missing gateway credential as upstream_auth_error', async () => {
      const err = await up.provider.chat({ model: 'x', messages: user('hi') }, withModel('claude-x', { apiKey: undefined })).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 502, code: 'upstream_auth_error' });
    });

    itMapsTransportFailures(up, { model: 'claude-x', startSimulator: () => startAnthropicSimulator() });
  });
});
