import { GatewayError, RateLimitError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type ChatCompletionChunk, type ChatCompletionRequest } from '@gw/provider-spec';
import { SNAPSHOT_SUFFIX } from '../../../simulators/src';
import { itReusesConnections } from '../testing/chat-transport';
import { collect, collectUntilError, joinToolCalls } from '../testing/collect';
import type { ChatCompletionDeltaWithReasoning } from './anthropic-chat-stream';
import { useAnthropicChatUpstream } from './fixtures/simulator-fixtures';

const user = (content: string): ChatCompletionRequest['messages'] => [{ role: 'user', content }];
const streamed = (extra: Partial<ChatCompletionRequest> = {}, content = 'hi'): ChatCompletionRequest => ({ model: 'x', messages: user(content), stream: true, ...extra });

const deltas = (chunks: ChatCompletionChunk[]) => chunks.flatMap((c) => (c.choices[0] ? [c.choices[0].delta as ChatCompletionDeltaWithReasoning] : []));
const text = (chunks: ChatCompletionChunk[]) => deltas(chunks).map((d) => d.content ?? '').join('');
const reasoning = (chunks: ChatCompletionChunk[]) => deltas(chunks).map((d) => d.reasoning ?? '').join('');
const finishReasons = (chunks: ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean);

describe('AnthropicChatProvider streaming against the Anthropic simulator', () => {
  const up = useAnthropicChatUpstream();
  const { withModel } = up;
  const run = async (req: ChatCompletionRequest, model = 'claude-sonnet-4-5') => {
    const stream = await up.provider.chatStream(req, withModel(model));
    return { chunks: await collect(stream.chunks), usage: stream.usage() };
  };

  it('streams a role chunk, the text and a finish chunk; without include_usage the caller sees no usage', async () => {
    const { chunks, usage } = await run(streamed({}, 'hi you'));
    expect(chunks[0]).toEqual({
      id: expect.stringMatching(/^msg_sim/),
      object: 'chat.completion.chunk',
      created: expect.any(Number),
      model: `claude-sonnet-4-5${SNAPSHOT_SUFFIX}`,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(text(chunks)).toBe('Echo: hi you');
    expect(chunks.at(-1)?.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
    expect(usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, provider_request_id: expect.stringMatching(/^req_sim/) });
    expect(JSON.parse(up.sim.lastRequest!.body).stream).toBe(true);
  });

  it('ends with a usage-only chunk when the caller asked for it', async () => {
    const { chunks, usage } = await run(streamed({ stream_options: { include_usage: true } }));
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.choices.length === 1)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage });
    expect(usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('reports length when max_tokens cuts the answer', async () => {
    const { chunks } = await run(streamed({ max_tokens: 2 }, 'a b c'));
    expect(text(chunks)).toBe('Echo: a');
    expect(finishReasons(chunks)).toEqual(['length']);
  });

  it('streams tool call deltas by call index', async () => {
    const tools = [{ type: 'function', function: { name: 'search' } }];
    const { chunks } = await run(streamed({ tools }, 'dogs and cats'), 'sim-tools');
    expect(joinToolCalls(chunks)).toEqual([{ id: expect.stringMatching(/^toolu_/), name: 'search', arguments: '{"query":"dogs and cats"}' }]);
    expect(finishReasons(chunks)).toEqual(['tool_calls']);
  });

  it('streams a json_schema answer as content, not as a tool call', async () => {
    const response_format = { type: 'json_schema' as const, json_schema: { name: 'lookup', schema: { type: 'object' } } };
    const { chunks } = await run(streamed({ response_format }, 'dogs'));
    expect(text(chunks)).toBe('{"query":"dogs"}');
    expect(joinToolCalls(chunks)).toEqual([]);
    expect(finishReasons(chunks)).toEqual(['stop']);
  });

  it('reports a refusal on the finish chunk', async () => {
    const { chunks } = await run(streamed(), 'sim-refusal');
    expect(chunks.at(-1)?.choices[0]).toEqual({ index: 0, delta: { refusal: expect.any(String) }, finish_reason: 'stop' });
  });

  it.each([
    ['streams thinking as reasoning deltas', {}, 'Considering: think hard'],
    ['keeps thinking away from the caller with exclude', { exclude: true }, ''],
  ])('%s', async (_name, extra, expected) => {
    const { chunks } = await run(streamed({ reasoning: { effort: 'low', ...extra } }, 'think hard'));
    expect(reasoning(chunks)).toBe(expected);
    expect(text(chunks)).toBe('Echo: think hard');
  });

  describe('recorded streams', () => {
    it('converts a text stream; cache reads count as prompt tokens', async () => {
      const { chunks, usage } = await run(streamed({ stream_options: { include_usage: true } }), 'sim-fixture-text-stream');
      expect(chunks[0]).toMatchObject({ id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY', model: 'claude-opus-4-1-20250805', choices: [{ delta: { role: 'assistant', content: '' } }] });
      expect(text(chunks)).toBe('Hello!');
      expect(usage).toEqual({ prompt_tokens: 35, completion_tokens: 15, total_tokens: 50, provider_request_id: 'req_recorded' });
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage });
    });

    it('converts text followed by parallel tool calls; block indexes become call indexes', async () => {
      const { chunks, usage } = await run(streamed(), 'sim-fixture-tool-use-stream');
      expect(text(chunks)).toBe('Okay, let me check.');
      expect(joinToolCalls(chunks)).toEqual([
        { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '{"location": "San Francisco, CA"}' },
        { id: 'toolu_01Bq8z2Lm5Nx7Pw9Rt3Vy6Kc', name: 'get_weather', arguments: '{"location": "Bogotá"}' },
      ]);
      expect(finishReasons(chunks)).toEqual(['tool_calls']);
      expect(usage).toEqual({ prompt_tokens: 472, completion_tokens: 89, total_tokens: 561, provider_request_id: 'req_recorded' });
    });

    it('converts a thinking stream with cumulative usage on message_delta', async () => {
      const { chunks, usage } = await run(streamed({ reasoning: { max_tokens: 1024 } }), 'sim-fixture-thinking-stream');
      expect(reasoning(chunks)).toBe('Use the Euclidean algorithm. 1071 = 2 × 462 + 147.');
      expect(text(chunks)).toBe('The GCD is 21.');
      expect(usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 130, total_tokens: 170 });
    });

    it('passes over event, block and delta types it does not know', async () => {
      const { chunks } = await run(streamed(), 'sim-fixture-future-event-stream');
      expect(text(chunks)).toBe('Found it');
      expect(joinToolCalls(chunks)).toEqual([]);
      expect(finishReasons(chunks)).toEqual(['stop']);
    });
  });

  describe('failures after the first byte', () => {
    const cases: Array<[string, string, new (...args: never[]) => GatewayError, RegExp, boolean]> = [
      ['an event that fails the schema', 'sim-fixture-malformed-event-stream', UpstreamError, /malformed/, false],
      ['an event that is not JSON', 'sim-fixture-invalid-json-stream', UpstreamError, /malformed/, false],
      ['an overloaded error event', 'sim-fixture-mid-stream-error', UpstreamError, /mid-stream \(overloaded_error\)/, true],
      ['a rate limit error event', 'sim-fixture-mid-stream-rate-limit', RateLimitError, /rate limit/, true],
      ['a body that ends before message_stop', 'sim-fixture-truncated-stream', UpstreamError, /ended before/, true],
      ['a connection dropped mid-stream', 'sim-drop', UpstreamError, /./, true],
    ];
    it.each(cases)('ends with a typed error on %s', async (_name, model, type, message, retryable) => {
      const { chunks } = await up.provider.chatStream(streamed(), withModel(model));
      const { received, error } = await collectUntilError(chunks);
      expect(received.length).toBeGreaterThanOrEqual(1);
      expect(received[0].choices[0].delta.role).toBe('assistant');
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
      expect(isRetryableUpstreamError(error)).toBe(retryable);
    });
  });

  itReusesConnections(up);
});
