import { GatewayError, InputError, NotFoundError, RateLimitError, TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type ChatCompletionChunk, type ChatCompletionRequest } from '@gw/provider-spec';
// The simulator is this package's upstream in tests; imported by path to keep it out of the runtime deps.
import { startOpenAISimulator, SNAPSHOT_SUFFIX, type SimulatorFixture } from '../../../simulators/src';
import { OriginPools } from '../http/origin-pools';
import { itMapsTransportFailures, itReusesConnections } from '../testing/chat-transport';
import { useSimulatedUpstream } from '../testing/simulated-upstream';
import { collect, collectUntilError, expectTypedFailure, joinToolCalls } from '../testing/collect';
import * as recorded from './fixtures/recorded-openai-shapes';
import { json, stream } from './fixtures/simulator-fixtures';
import { OpenAICompatibleChatProvider } from './openai-chat-provider';

const fixtures: Record<string, SimulatorFixture> = {
  'text-response': json(200, recorded.textResponse, { 'x-request-id': 'req_recorded' }),
  'tool-call-response': json(200, recorded.toolCallResponse),
  'malformed-response': json(200, { id: 7, choices: 'none' }),
  'not-json-response': json(200, '<html>ok</html>'),
  'context-length-400': json(400, recorded.contextLengthErrorBody),
  'invalid-key-401': json(401, recorded.invalidApiKeyErrorBody),
  'quota-429': json(429, recorded.insufficientQuotaErrorBody),
  'rate-limit-429': json(429, recorded.rateLimitErrorBody, { 'retry-after': '20' }),
  'server-500': json(500, recorded.serverErrorBody),
  'html-502': json(502, '<html><body>502 Bad Gateway</body></html>', { 'content-type': 'text/html' }),
  'text-stream': stream(recorded.textStream),
  'tool-call-stream': stream(recorded.toolCallStream),
  'azure-stream': stream(recorded.azureStream),
  'malformed-chunk-stream': stream(recorded.malformedChunkStream),
  'invalid-json-stream': stream(recorded.invalidJsonStream),
  'mid-stream-error': stream(recorded.midStreamErrorStream),
  'truncated-stream': stream(recorded.truncatedStream),
  'dropped-stream': stream(recorded.truncatedStream, { dropConnection: true }),
};

const user = (content: string): ChatCompletionRequest['messages'] => [{ role: 'user', content }];

const text = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

describe('OpenAICompatibleChatProvider against the OpenAI simulator', () => {
  const up = useSimulatedUpstream({
    start: () => startOpenAISimulator({ fixtures }),
    create: (pools) => new OpenAICompatibleChatProvider(pools),
    target: { apiKey: 'sk-upstream', providerModel: 'gpt-4o-mini' },
  });
  const { withModel } = up;

  describe('chat', () => {
    it('answers with the provider model, normalized usage and the upstream request id', async () => {
      const { completion, usage } = await up.provider.chat({ model: 'acme/small', messages: user('hello there') }, up.target);
      expect(completion).toEqual({
        id: expect.stringMatching(/^chatcmpl-/),
        object: 'chat.completion',
        created: expect.any(Number),
        model: `gpt-4o-mini${SNAPSHOT_SUFFIX}`,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello there' }, logprobs: null, finish_reason: 'stop' }],
        usage,
      });
      expect(usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, provider_request_id: expect.stringMatching(/^req_sim/) });
    });

    it('reports finish_reason length when the cap cuts the answer', async () => {
      const { completion } = await up.provider.chat({ model: 'x', messages: user('a b c d'), max_completion_tokens: 2 }, up.target);
      expect(completion.choices[0]).toMatchObject({ message: { content: 'Echo: a' }, finish_reason: 'length' });
    });

    it('answers a tool call', async () => {
      const tools = [{ type: 'function', function: { name: 'search', parameters: { type: 'object' } } }];
      const { completion } = await up.provider.chat({ model: 'x', messages: user('cats'), tools }, withModel('sim-tools'));
      expect(completion.choices[0]).toEqual({
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: [{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'search', arguments: '{"query":"cats"}' } }] },
        logprobs: null,
        finish_reason: 'tool_calls',
      });
    });

    it.each([
      ['recorded text response', 'text-response', { content: 'Hello! How can I assist you today?' }, 'stop', { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, provider_request_id: 'req_recorded' }],
      ['recorded tool call response', 'tool-call-response', { content: null, tool_calls: recorded.toolCallResponse.choices[0].message.tool_calls }, 'tool_calls', { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99, provider_request_id: 'chatcmpl-abc123' }],
    ])('converts a %s', async (_name, fixture, message, finishReason, usage) => {
      const { completion, usage: got } = await up.provider.chat({ model: 'x', messages: user('hi') }, withModel(`sim-fixture-${fixture}`));
      expect(completion.choices[0]).toEqual({ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason });
      expect(got).toEqual(usage);
      expect(completion).not.toHaveProperty('service_tier');
    });
  });

  describe('idempotency key', () => {
    it('is sent upstream, so a repeated call with the same key gets the first completion back', async () => {
      const req = { model: 'acme/small', messages: user('run me once') };
      const keyed = { ...up.target, idempotencyKey: 'br-job-1:dep-a' };
      const first = await up.provider.chat(req, keyed);
      const rerun = await up.provider.chat(req, keyed);
      expect(rerun.completion).toEqual(first.completion);
      expect(rerun.usage.provider_request_id).toBe(first.usage.provider_request_id);
    });

    it('a call without a key, or with another key, is generated afresh', async () => {
      const req = { model: 'acme/small', messages: user('run me once') };
      const ids = [
        (await up.provider.chat(req, { ...up.target, idempotencyKey: 'br-job-2:dep-a' })).completion.id,
        (await up.provider.chat(req, { ...up.target, idempotencyKey: 'br-job-3:dep-a' })).completion.id,
        (await up.provider.chat(req, up.target)).completion.id,
        (await up.provider.chat(req, up.target)).completion.id,
      ];
      expect(new Set(ids).size).toBe(4);
    });
  });

  describe('chatStream', () => {
    it('streams the answer; without include_usage the caller sees no usage but usage() has it', async () => {
      const { chunks, usage } = await up.provider.chatStream({ model: 'x', messages: user('hi you'), stream: true }, up.target);
      const received = await collect(chunks);
      expect(text(received)).toBe('Echo: hi you');
      expect(received.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
      expect(received.at(-1)?.choices[0].finish_reason).toBe('stop');
      expect(usage()).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, provider_request_id: expect.stringMatching(/^req_sim/) });
    });

    it('passes the usage-only chunk on when the caller asked for it', async () => {
      const req: ChatCompletionRequest = { model: 'x', messages: user('hi'), stream: true, stream_options: { include_usage: true } };
      const { chunks, usage } = await up.provider.chatStream(req, up.target);
      const received = await collect(chunks);
      expect(received.slice(0, -1).every((c) => c.usage === null)).toBe(true);
      expect(received.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: usage() });
    });

    it('streams tool call deltas', async () => {
      const tools = [{ type: 'function', function: { name: 'search' } }];
      const { chunks } = await up.provider.chatStream({ model: 'x', messages: user('dogs and cats'), tools, stream: true }, withModel('sim-tools'));
      const received = await collect(chunks);
      expect(joinToolCalls(received)).toEqual([{ id: expect.stringMatching(/^call_/), name: 'search', arguments: '{"query":"dogs and cats"}' }]);
      expect(received.at(-1)?.choices[0].finish_reason).toBe('tool_calls');
    });

    it('converts a recorded text stream, dropping unknown fields', async () => {
      const req: ChatCompletionRequest = { model: 'x', messages: user('hi'), stream: true, stream_options: { include_usage: true } };
      const { chunks, usage } = await up.provider.chatStream(req, withModel('sim-fixture-text-stream'));
      const received = await collect(chunks);
      expect(received).toHaveLength(5);
      expect(text(received)).toBe('Hello!');
      expect(received[0]).toEqual({
        id: recorded.textStreamChunks[0].id,
        object: 'chat.completion.chunk',
        created: recorded.textStreamChunks[0].created,
        model: 'gpt-4o-mini-2024-07-18',
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        usage: null,
      });
      expect(usage()).toEqual({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11, provider_request_id: 'req_recorded' });
    });

    it('converts a recorded parallel tool call stream', async () => {
      const { chunks, usage } = await up.provider.chatStream({ model: 'x', messages: user('weather'), stream: true }, withModel('sim-fixture-tool-call-stream'));
      const received = await collect(chunks);
      expect(joinToolCalls(received)).toEqual([
        { id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
        { id: 'call_L7mTvS3K9pQ2rX8wY1zA4bC6', name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
      ]);
      expect(received.at(-1)?.choices[0].finish_reason).toBe('tool_calls');
      expect(usage()).toMatchObject({ prompt_tokens: 54, completion_tokens: 40, total_tokens: 94 });
    });

    it('skips choice-less chunks that carry no usage (Azure prompt filter results)', async () => {
      const { chunks, usage } = await up.provider.chatStream({ model: 'x', messages: user('hi'), stream: true }, withModel('sim-fixture-azure-stream'));
      const received = await collect(chunks);
      expect(received.every((c) => c.choices.length === 1)).toBe(true);
      expect(text(received)).toBe('Hello!');
      expect(usage()).toBeNull();
    });

    it.each([
      ['a chunk that fails the schema', 'malformed-chunk-stream', /malformed/, false],
      ['a chunk that is not JSON', 'invalid-json-stream', /malformed/, false],
      ['an error event mid-stream', 'mid-stream-error', /mid-stream/, true],
      ['a body that ends before the answer finished', 'truncated-stream', /ended before/, true],
      ['a connection dropped mid-stream', 'dropped-stream', /./, true],
    ])('ends with an UpstreamError on %s', async (_name, fixture, message, retryable) => {
      const { chunks } = await up.provider.chatStream({ model: 'x', messages: user('hi'), stream: true }, withModel(`sim-fixture-${fixture}`));
      const { received, error } = await collectUntilError(chunks);
      expect(received.length).toBeGreaterThanOrEqual(1);
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ status: 502, message: expect.stringMatching(message) });
      expect(isRetryableUpstreamError(error)).toBe(retryable);
    });
  });

  describe('upstream failures', () => {
    const failures: Array<[string, string, new (...args: never[]) => GatewayError, Record<string, unknown>, boolean]> = [
      ['simulated 400', 'sim-error-400', InputError, { status: 400, param: 'messages', message: expect.stringContaining('simulated invalid request') }, false],
      ['recorded context length 400', 'sim-fixture-context-length-400', InputError, { status: 400, param: 'messages', code: 'context_length_exceeded' }, false],
      ['simulated 401', 'sim-error-401', UpstreamError, { status: 502, code: 'upstream_auth_error', upstreamStatus: 401 }, false],
      ['recorded invalid key 401', 'sim-fixture-invalid-key-401', UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
      ['simulated 403', 'sim-error-403', UpstreamError, { status: 502, code: 'upstream_auth_error', upstreamStatus: 403 }, false],
      ['simulated 404', 'sim-error-404', NotFoundError, { status: 404, code: 'model_not_found', param: 'model' }, false],
      ['simulated 429', 'sim-error-429', RateLimitError, { status: 429, headers: { 'retry-after': '1' } }, true],
      ['recorded rate limit 429', 'sim-fixture-rate-limit-429', RateLimitError, { status: 429, headers: { 'retry-after': '20' } }, true],
      ['recorded insufficient quota 429', 'sim-fixture-quota-429', UpstreamError, { status: 502, code: 'upstream_insufficient_balance' }, false],
      ['simulated 500', 'sim-error-500', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 500 }, true],
      ['recorded 500', 'sim-fixture-server-500', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 500 }, true],
      ['HTML 502', 'sim-fixture-html-502', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 502 }, true],
      ['simulated 503', 'sim-error-503', UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 503 }, true],
      ['simulated 504', 'sim-error-504', TimeoutError, { status: 504 }, true],
      ['malformed 200 response', 'sim-fixture-malformed-response', UpstreamError, { status: 502, message: expect.stringContaining('malformed') }, false],
      ['non-JSON 200 response', 'sim-fixture-not-json-response', UpstreamError, { status: 502, message: expect.stringContaining('malformed') }, false],
    ];

    it.each(failures)('chat: %s', async (_name, model, type, fields, retryable) => {
      const err = await up.provider.chat({ model: 'x', messages: user('hi') }, withModel(model)).catch((e: unknown) => e);
      expectTypedFailure(err, type, fields, retryable);
    });

    it.each(failures.filter(([, model]) => !model.includes('response')))('chatStream throws before the first chunk: %s', async (_name, model, type, fields, retryable) => {
      const err = await up.provider.chatStream({ model: 'x', messages: user('hi'), stream: true }, withModel(model)).catch((e: unknown) => e);
      expectTypedFailure(err, type, fields, retryable);
    });

    it('reports a missing gateway credential as upstream_auth_error', async () => {
      const err = await up.provider.chat({ model: 'x', messages: user('hi') }, withModel('gpt-4o-mini', { apiKey: undefined })).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 502, code: 'upstream_auth_error' });
    });

    itMapsTransportFailures(up, { model: 'gpt-4o-mini', startSimulator: () => startOpenAISimulator() });
  });

  itReusesConnections(up);

  it('keeps one pool per origin', async () => {
    const own = new OriginPools();
    const p = new OpenAICompatibleChatProvider(own);
    try {
      await p.chat({ model: 'x', messages: user('a') }, up.target);
      await p.chat({ model: 'x', messages: user('b') }, { ...up.target, baseUrl: `${up.sim.baseUrl}/` });
      expect(own.size).toBe(1);
      await p.chat({ model: 'x', messages: user('c') }, { ...up.target, baseUrl: `http://localhost:${up.sim.port}/v1` });
      expect(own.size).toBe(2);
    } finally {
      await p.close();
    }
  });
});
