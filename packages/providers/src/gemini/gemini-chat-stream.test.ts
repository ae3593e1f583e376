import { UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type ChatCompletionChunk, type ChatCompletionRequest } from '@gw/provider-spec';
// The simulator is this package's upstream in tests; imported by path to keep it out of the runtime deps.
import { SNAPSHOT_SUFFIX } from '../../../simulators/src';
import { collect, collectUntilError } from '../testing/collect';
import { useGeminiChatUpstream } from './fixtures/simulator-fixtures';
import * as recorded from './fixtures/recorded-gemini-shapes';

const ask = (content: string, fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({ model: 'acme/gem', messages: [{ role: 'user', content }], stream: true, ...fields });
const withUsage = { stream_options: { include_usage: true } };

const deltas = (chunks: ChatCompletionChunk[], index = 0) => chunks.flatMap((c) => c.choices.filter((choice) => choice.index === index).map((choice) => choice.delta));
const text = (chunks: ChatCompletionChunk[], index = 0) => deltas(chunks, index).map((d) => d.content ?? '').join('');
const finishReasons = (chunks: ChatCompletionChunk[]) => chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter((r) => r !== null);

describe('GeminiChatProvider.chatStream against the Gemini simulator', () => {
  const up = useGeminiChatUpstream();
  const { withModel } = up;

  it('streams a role chunk, text deltas and a finish chunk; without include_usage only usage() has the usage', async () => {
    const { chunks, usage } = await up.provider.chatStream(ask('hi you'), up.target);
    const received = await collect(chunks);
    expect(received[0]).toEqual({
      id: expect.stringMatching(/^simresp/),
      object: 'chat.completion.chunk',
      created: expect.any(Number),
      model: `gemini-2.5-flash${SNAPSHOT_SUFFIX}`,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(text(received)).toBe('Echo: hi you');
    expect(received.at(-1)?.choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    expect(received.every((c) => c.choices.length === 1 && !('usage' in c) && c.id === received[0].id)).toBe(true);
    expect(usage()).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5, provider_request_id: received[0].id });
  });

  it('ends with a usage-only chunk built from the last usage when the caller asked for it', async () => {
    const { chunks, usage } = await up.provider.chatStream(ask('hi', withUsage), up.target);
    const received = await collect(chunks);
    expect(received.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(received.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } });
    expect(received.at(-1)?.usage).toEqual(usage());
  });

  it('streams a function call as one tool call delta with complete arguments', async () => {
    const tools = [{ type: 'function', function: { name: 'search' } }];
    const { chunks } = await up.provider.chatStream(ask('dogs and cats', { tools }), withModel('sim-tools'));
    const received = await collect(chunks);
    expect(deltas(received).flatMap((d) => d.tool_calls ?? [])).toEqual([
      { index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'search', arguments: '{"query":"dogs and cats"}' } },
    ]);
    expect(finishReasons(received)).toEqual(['tool_calls']);
  });

  it('streams a blocked answer as a refusal', async () => {
    const { chunks } = await up.provider.chatStream(ask('bad'), withModel('sim-refusal'));
    const received = await collect(chunks);
    expect(deltas(received)).toEqual([{ role: 'assistant', content: '' }, { refusal: 'The provider blocked the response (SAFETY).' }, {}]);
    expect(finishReasons(received)).toEqual(['stop']);
  });

  it('streams thoughts as reasoning deltas before the text, and finish length on the cap', async () => {
    const { chunks, usage } = await up.provider.chatStream(ask('one two three', { reasoning: { max_tokens: 256 }, max_tokens: 2 }), up.target);
    const received = await collect(chunks);
    expect(deltas(received)[1]).toEqual({ reasoning: 'Thinking about: one two three' });
    expect(text(received)).toBe('Echo: one');
    expect(finishReasons(received)).toEqual(['length']);
    expect(usage()).toMatchObject({ completion_tokens: 2 + 5 });
  });

  it('streams n choices, each announced, filled and finished', async () => {
    const { chunks } = await up.provider.chatStream(ask('hi', { n: 2, logprobs: true }), up.target);
    const received = await collect(chunks);
    expect([text(received, 0), text(received, 1)]).toEqual(['Echo: hi', 'Echo: hi']);
    expect(deltas(received, 1)[0]).toEqual({ role: 'assistant', content: '' });
    expect(finishReasons(received)).toEqual(['stop', 'stop']);
    const withLogprobs = received.flatMap((c) => c.choices).filter((c) => c.logprobs);
    expect(withLogprobs[0].logprobs).toEqual({ content: [{ token: 'Echo:', logprob: -0.01, bytes: [...Buffer.from('Echo:')], top_logprobs: [] }] });
  });

  it('converts a recorded text stream (CRLF framing, empty signed last part)', async () => {
    const { chunks, usage } = await up.provider.chatStream(ask('hi', withUsage), withModel('sim-fixture-text-stream'));
    const received = await collect(chunks);
    expect(text(received)).toBe('There are **3** "r"s in strawberry.');
    expect(received.map((c) => [c.id, c.model])).toEqual(Array(received.length).fill([recorded.textStreamChunks[0].responseId, 'gemini-3-pro-preview']));
    expect(finishReasons(received)).toEqual(['stop']);
    expect(usage()).toEqual({ prompt_tokens: 9, completion_tokens: 23 + 185, total_tokens: 217, provider_request_id: recorded.textStreamChunks[0].responseId });
  });

  it('converts a recorded tool call stream', async () => {
    const { chunks } = await up.provider.chatStream(ask('weather'), withModel('sim-fixture-tool-call-stream'));
    const received = await collect(chunks);
    expect(deltas(received).flatMap((d) => d.tool_calls ?? [])).toEqual([
      { index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'weather', arguments: '{"location":"San Francisco"}' } },
    ]);
    expect(finishReasons(received)).toEqual(['tool_calls']);
  });

  it.each([
    ['blocked prompt', 'blocked-prompt-stream', 'The provider blocked the prompt (PROHIBITED_CONTENT).', ''],
    ['answer blocked midway', 'safety-stream', 'The provider blocked the response (SAFETY).', 'Here is how'],
  ])('converts a recorded %s stream into a refusal', async (_name, fixture, refusal, partialText) => {
    const { chunks } = await up.provider.chatStream(ask('x'), withModel(`sim-fixture-${fixture}`));
    const received = await collect(chunks);
    expect(deltas(received).filter((d) => d.refusal)).toEqual([{ refusal }]);
    expect(text(received)).toBe(partialText);
    expect(finishReasons(received)).toEqual(['stop']);
  });

  it.each([
    ['a body that ends without a finish reason', 'sim-fixture-truncated-stream', /ended before/, true],
    ['a connection dropped mid-stream', 'sim-drop', /./, true],
    ['an error event mid-stream', 'sim-fixture-mid-stream-error', /HTTP 503/, true],
    ['an event that fails the schema', 'sim-fixture-malformed-chunk-stream', /malformed/, false],
    ['an event that is not JSON', 'sim-fixture-invalid-json-stream', /malformed/, false],
  ])('ends with an UpstreamError on %s', async (_name, model, message, retryable) => {
    const { chunks } = await up.provider.chatStream(ask('hi there'), withModel(model));
    const { received, error } = await collectUntilError(chunks);
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 502, message: expect.stringMatching(message) });
    expect(isRetryableUpstreamError(error)).toBe(retryable);
  });
});
