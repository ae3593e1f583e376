import { isRetryableUpstreamError, type ChatCompletionRequest } from '@gw/provider-spec';
// The simulator is this package's upstream in tests; imported by path to keep it out of the runtime deps.
import { SNAPSHOT_SUFFIX } from '../../../simulators/src';
import { itReusesConnections } from '../testing/chat-transport';
import { geminiSimulatorFixtures, useGeminiChatUpstream } from './fixtures/simulator-fixtures';
import * as recorded from './fixtures/recorded-gemini-shapes';

const user = (content: string): ChatCompletionRequest['messages'] => [{ role: 'user', content }];
const ask = (content: string, fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({ model: 'acme/gem', messages: user(content), ...fields });

describe('GeminiChatProvider.chat against the Gemini simulator', () => {
  const up = useGeminiChatUpstream();
  const { withModel } = up;

  it('answers with the served snapshot, the response id and Gemini usage', async () => {
    const { completion, usage } = await up.provider.chat(ask('hello there', { messages: [{ role: 'system', content: 'be nice' }, ...user('hello there')] }), up.target);
    expect(completion).toEqual({
      id: expect.stringMatching(/^simresp/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: `gemini-2.5-flash${SNAPSHOT_SUFFIX}`,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello there' }, logprobs: null, finish_reason: 'stop' }],
      usage,
    });
    expect(usage).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, provider_request_id: completion.id });
  });

  it('reports finish_reason length when maxOutputTokens cuts the answer', async () => {
    const { completion } = await up.provider.chat(ask('a b c d', { max_completion_tokens: 2 }), up.target);
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Echo: a' }, finish_reason: 'length' });
  });

  it('answers a function call as a tool call with a generated id and JSON arguments', async () => {
    const tools = [{ type: 'function', function: { name: 'search', parameters: { type: 'object', properties: { query: { type: 'string' } }, additionalProperties: false } } }];
    const { completion } = await up.provider.chat(ask('cats', { tools, tool_choice: 'required' }), withModel('sim-tools'));
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'search', arguments: '{"query":"cats"}' } }] },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  it('asks for JSON with a schema Gemini accepts', async () => {
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { echo: { type: 'string', format: 'uri' } }, required: ['echo'], additionalProperties: false };
    const { completion } = await up.provider.chat(ask('hi you', { response_format: { type: 'json_schema', json_schema: { name: 'e', strict: true, schema } } }), up.target);
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual({ echo: 'hi you' });
  });

  it('answers a blocked response as a refusal with null content', async () => {
    const { completion, usage } = await up.provider.chat(ask('something bad'), withModel('sim-refusal'));
    expect(completion.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, refusal: 'The provider blocked the response (SAFETY).' },
      logprobs: null,
      finish_reason: 'stop',
    });
    expect(usage).toMatchObject({ prompt_tokens: 2, total_tokens: 2 });
  });

  it('returns thoughts as reasoning and bills them as completion tokens', async () => {
    const { completion, usage } = await up.provider.chat(ask('why', { reasoning: { effort: 'low' } }), up.target);
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: 'Echo: why', reasoning: 'Thinking about: why' });
    expect(usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 2 + 3, total_tokens: 6 });
    const { completion: excluded, usage: excludedUsage } = await up.provider.chat(ask('why', { reasoning: { effort: 'low', exclude: true } }), up.target);
    expect(excluded.choices[0].message).toEqual({ role: 'assistant', content: 'Echo: why' });
    // Gemini still thinks (and bills for it); it only keeps the thoughts to itself.
    expect(excludedUsage).toMatchObject({ prompt_tokens: 1, completion_tokens: 5, total_tokens: 6 });
  });

  it('answers n choices and their logprobs', async () => {
    const { completion } = await up.provider.chat(ask('hi', { n: 2, logprobs: true, top_logprobs: 2 }), up.target);
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(completion.choices[1].logprobs).toEqual({
      content: [
        { token: 'Echo:', logprob: -0.01, bytes: [...Buffer.from('Echo:')], top_logprobs: [expect.objectContaining({ token: 'Echo:' }), expect.objectContaining({ token: 'Echo:#1' })] },
        { token: ' hi', logprob: -0.02, bytes: [...Buffer.from(' hi')], top_logprobs: [expect.objectContaining({ token: ' hi' }), expect.objectContaining({ token: ' hi#1' })] },
      ],
    });
  });

  it.each([
    ['text response', 'text-response', { content: "There are **3** r's in strawberry." }, 'stop', { prompt_tokens: 9, completion_tokens: 272, total_tokens: 281 }],
    ['thought response', 'thought-response', { content: 'There are 3 r\'s in "strawberry".', reasoning: recorded.thoughtResponse.candidates[0].content.parts[0].text }, 'stop', { prompt_tokens: 11, completion_tokens: 409, total_tokens: 420 }],
    [
      'parallel tool call response',
      'parallel-tool-call-response',
      {
        content: null,
        tool_calls: [
          { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"location":"Bogotá"}' } },
        ],
      },
      'tool_calls',
      { prompt_tokens: 29, completion_tokens: 75, total_tokens: 104 },
    ],
    ['safety-blocked response', 'safety-response', { content: null, refusal: 'The provider blocked the response (SAFETY).' }, 'stop', { prompt_tokens: 14, total_tokens: 14 }],
    ['blocked prompt', 'blocked-prompt-response', { content: null, refusal: 'The provider blocked the prompt (PROHIBITED_CONTENT).' }, 'stop', { prompt_tokens: 9, total_tokens: 9 }],
  ])('converts a recorded %s', async (_name, fixture, message, finishReason, usage) => {
    const { completion, usage: got } = await up.provider.chat(ask('hi'), withModel(`sim-fixture-${fixture}`));
    expect(completion.choices).toEqual([{ index: 0, message: { role: 'assistant', ...message }, logprobs: null, finish_reason: finishReason }]);
    expect(got).toEqual({ ...usage, provider_request_id: completion.id });
    const body = JSON.parse(geminiSimulatorFixtures[fixture].body) as { responseId: string; modelVersion: string };
    expect(completion).toMatchObject({ id: body.responseId, model: body.modelVersion });
  });

  it('converts recorded logprobs', async () => {
    const { completion } = await up.provider.chat(ask('hi', { logprobs: true, top_logprobs: 1 }), withModel('sim-fixture-logprobs-response'));
    expect(completion.choices[0].logprobs).toMatchObject({ content: [{ token: 'Hello', logprob: -0.0012 }, { token: ' there', logprob: -0.1242 }] });
  });

  it.each(['malformed-response', 'not-json-response', 'empty-response'])('fails on a %s with a non-retryable 502', async (fixture) => {
    const err = await up.provider.chat(ask('hi'), withModel(`sim-fixture-${fixture}`)).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, message: expect.stringContaining('malformed') });
    expect(isRetryableUpstreamError(err)).toBe(false);
  });

  itReusesConnections(up);
});
