import { InputError } from '@gw/platform';
import type { ChatCompletionRequest } from '@gw/provider-spec';
import { convertToAnthropicRequest, DEFAULT_MAX_TOKENS } from './convert-to-anthropic-request';

const base: ChatCompletionRequest = { model: 'public/model', messages: [{ role: 'user', content: 'hi' }] };
const weather = { type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const convert = (extra: Partial<ChatCompletionRequest>, stream = false) => convertToAnthropicRequest({ ...base, ...extra }, 'claude-x', stream);

function inputErrorOf(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('did not throw');
}

describe('convertToAnthropicRequest', () => {
  it('replaces the model, defaults max_tokens and reads nothing else into the body', () => {
    expect(convert({})).toEqual({ body: { model: 'claude-x', max_tokens: DEFAULT_MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] }, includeReasoning: false });
  });

  it('sets stream only for streamed calls', () => {
    expect(convert({ stream: true }, false).body).not.toHaveProperty('stream');
    expect(convert({}, true).body.stream).toBe(true);
  });

  const converted: Array<[string, Partial<ChatCompletionRequest>, Record<string, unknown>]> = [
    ['max_completion_tokens -> max_tokens', { max_completion_tokens: 100 }, { max_tokens: 100 }],
    ['max_tokens -> max_tokens', { max_tokens: 50 }, { max_tokens: 50 }],
    ['max_completion_tokens wins over max_tokens', { max_completion_tokens: 100, max_tokens: 50 }, { max_tokens: 100 }],
    ['temperature', { temperature: 0.3 }, { temperature: 0.3 }],
    ['top_p', { top_p: 0.9 }, { top_p: 0.9 }],
    ['top_k', { top_k: 40 }, { top_k: 40 }],
    ['stop string -> stop_sequences', { stop: 'END' }, { stop_sequences: ['END'] }],
    ['stop array -> stop_sequences', { stop: ['\n\n', 'END'] }, { stop_sequences: ['\n\n', 'END'] }],
    [
      'tools -> name, description, input_schema',
      { tools: [weather, { type: 'function', function: { name: 'now' } }] },
      { tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: weather.function.parameters }, { name: 'now', input_schema: { type: 'object', properties: {} } }] },
    ],
    ['tool_choice auto', { tools: [weather], tool_choice: 'auto' }, { tool_choice: { type: 'auto' } }],
    ['tool_choice required -> any', { tools: [weather], tool_choice: 'required' }, { tool_choice: { type: 'any' } }],
    ['tool_choice none', { tools: [weather], tool_choice: 'none' }, { tool_choice: { type: 'none' } }],
    ['named tool_choice -> tool', { tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } }, { tool_choice: { type: 'tool', name: 'get_weather' } }],
    ['parallel_tool_calls false -> disable_parallel_tool_use', { tools: [weather], parallel_tool_calls: false }, { tool_choice: { type: 'auto', disable_parallel_tool_use: true } }],
    ['parallel_tool_calls false with required', { tools: [weather], tool_choice: 'required', parallel_tool_calls: false }, { tool_choice: { type: 'any', disable_parallel_tool_use: true } }],
    ['extra_body is merged', { extra_body: { metadata: { user_id: 'u1' }, service_tier: 'auto' } }, { metadata: { user_id: 'u1' }, service_tier: 'auto' }],
    ['extra_body adds fields', { extra_body: { metadata_user: 'x', service_tier: 'auto' } }, { service_tier: 'auto', metadata_user: 'x' }],
    ['user -> metadata.user_id', { user: 'end-user-1' }, { metadata: { user_id: 'end-user-1' } }],
    ['safety_identifier -> metadata.user_id', { safety_identifier: 'hashed-1' }, { metadata: { user_id: 'hashed-1' } }],
    ['user and safety_identifier naming the same user', { user: 'u-1', safety_identifier: 'u-1' }, { metadata: { user_id: 'u-1' } }],
    ['user beside other extra_body metadata', { user: 'u-1', extra_body: { metadata: { tier: 'x' } } }, { metadata: { tier: 'x', user_id: 'u-1' } }],
  ];
  it.each(converted)('%s', (_name, extra, expected) => {
    expect(convert(extra).body).toMatchObject(expected);
  });

  it.each([
    ['parallel_tool_calls without tools', { parallel_tool_calls: false }],
    ['parallel_tool_calls false with tool_choice none', { tools: [weather], tool_choice: 'none' as const, parallel_tool_calls: false }],
  ])('sets no parallel switch for %s', (_name, extra) => {
    expect((convert(extra).body.tool_choice as Record<string, unknown> | undefined)?.disable_parallel_tool_use).toBeUndefined();
  });

  it('sends the gateway\'s own fields nowhere', () => {
    const body = convert({ metadata: { user: 'u1' }, store: false, include: [], network_search: false }).body;
    expect(Object.keys(body).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });

  describe('unsupported parameters are reported, never dropped', () => {
    it.each([
      ['logprobs', { logprobs: true }],
      ['top_logprobs', { top_logprobs: 3 }],
      ['n', { n: 2 }],
      ['logit_bias', { logit_bias: { '50256': -100 } }],
      ['seed', { seed: 0 }],
      ['frequency_penalty', { frequency_penalty: 0.5 }],
      ['presence_penalty', { presence_penalty: -0.5 }],
    ])('%s', (param, extra) => {
      expect(inputErrorOf(() => convert(extra))).toMatchObject({ status: 400, param, code: 'unsupported_parameter' });
    });

    it.each([
      ['logprobs false', { logprobs: false }],
      ['top_logprobs 0', { top_logprobs: 0 }],
      ['n 1', { n: 1 }],
      ['empty logit_bias', { logit_bias: {} }],
      ['zero penalties', { frequency_penalty: 0, presence_penalty: 0 }],
    ])('but accepts the no-op value: %s', (_name, extra) => {
      expect(() => convert(extra)).not.toThrow();
    });

    it.each([
      ['temperature above 1', { temperature: 1.5 }, 'temperature'],
      ['a non-function tool', { tools: [{ type: 'web_search', function: { name: 'x' } }] }, 'tools[0].type'],
      ['a non-function tool_choice', { tools: [weather], tool_choice: { type: 'custom', function: { name: 'x' } } }, 'tool_choice.type'],
      ['an unknown response_format', { response_format: { type: 'xml' } as never }, 'response_format.type'],
      ['a json_schema without name', { response_format: { type: 'json_schema', json_schema: { schema: {} } } as never }, 'response_format.json_schema.name'],
      ['a JSON response_format with tools', { tools: [weather], response_format: { type: 'json_object' } }, 'response_format'],
      ['user and safety_identifier naming different users', { user: 'u-1', safety_identifier: 'u-2' }, 'safety_identifier'],
      ['user beside extra_body.metadata.user_id', { user: 'u-1', extra_body: { metadata: { user_id: 'u-2' } } }, 'extra_body.metadata.user_id'],
    ])('rejects %s', (_name, extra, param) => {
      expect(inputErrorOf(() => convert(extra as Partial<ChatCompletionRequest>))).toMatchObject({ status: 400, param });
    });
  });

  describe('response_format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    it('json_schema becomes a forced tool named after the schema', () => {
      const out = convert({ response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } } });
      expect(out.jsonToolName).toBe('verdict');
      expect(out.body).toMatchObject({ tools: [{ name: 'verdict', description: expect.any(String), input_schema: schema }], tool_choice: { type: 'tool', name: 'verdict' } });
    });

    it('json_object becomes a forced tool with an open schema', () => {
      const out = convert({ response_format: { type: 'json_object' } });
      expect(out.body).toMatchObject({ tools: [{ name: out.jsonToolName, input_schema: { type: 'object', additionalProperties: true } }], tool_choice: { type: 'tool', name: out.jsonToolName } });
    });

    it('text changes nothing', () => {
      expect(convert({ response_format: { type: 'text' } }).body).not.toHaveProperty('tools');
    });
  });

  describe('reasoning -> thinking', () => {
    it.each([
      ['an explicit budget without a cap leaves the default answer room', { reasoning: { max_tokens: 2000 } }, 2000, 2000 + DEFAULT_MAX_TOKENS],
      ['an explicit budget within the cap', { reasoning: { max_tokens: 2000 }, max_completion_tokens: 5000 }, 2000, 5000],
      ['effort without a cap', { reasoning: { effort: 'high' as const } }, 16_384, 16_384 + DEFAULT_MAX_TOKENS],
      ['effort as a share of the cap', { reasoning: { effort: 'medium' as const }, max_tokens: 10_000 }, 5000, 10_000],
      ['low effort is at least the minimum budget', { reasoning: { effort: 'low' as const }, max_tokens: 2000 }, 1024, 2000],
      ['enabled alone means medium effort', { reasoning: { enabled: true } }, 8192, 8192 + DEFAULT_MAX_TOKENS],
    ])('%s', (_name, extra, budget, maxTokens) => {
      const out = convert(extra);
      expect(out.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: budget }, max_tokens: maxTokens });
      expect(out.includeReasoning).toBe(true);
    });

    it('exclude keeps thinking on but the text away from the caller', () => {
      const out = convert({ reasoning: { effort: 'low', exclude: true } });
      expect(out.body.thinking).toBeDefined();
      expect(out.includeReasoning).toBe(false);
    });

    it.each([
      ['effort none', { effort: 'none' as const }],
      ['enabled false', { enabled: false, effort: 'high' as const }],
      ['exclude alone', { exclude: true }],
    ])('no thinking for %s', (_name, reasoning) => {
      const out = convert({ reasoning });
      expect(out.body).not.toHaveProperty('thinking');
      expect(out.includeReasoning).toBe(false);
    });

    it.each([
      ['a budget below the minimum', { reasoning: { max_tokens: 500 } }, 'reasoning.max_tokens'],
      ['a budget that fills the cap', { reasoning: { max_tokens: 2000 }, max_completion_tokens: 2000 }, 'max_completion_tokens'],
      ['a cap too small for any budget', { reasoning: { effort: 'low' as const }, max_tokens: 1000 }, 'max_tokens'],
      ['a forced tool', { reasoning: { effort: 'low' as const }, tools: [weather], tool_choice: 'required' as const }, 'tool_choice'],
      ['a JSON response_format', { reasoning: { effort: 'low' as const }, response_format: { type: 'json_object' as const } }, 'response_format'],
    ])('rejects %s', (_name, extra, param) => {
      expect(inputErrorOf(() => convert(extra))).toMatchObject({ status: 400, param });
    });
  });
});
