import type { ChatCompletionRequest } from '@gw/provider-spec';
import { GATEWAY_PARAMETERS } from '../convert/request-field-policy';
import { convertToOpenAIChat, OPENAI_CAPABILITIES } from './convert-to-openai-chat';

const base: ChatCompletionRequest = { model: 'public/model', messages: [{ role: 'user', content: 'hi' }] };

describe('convertToOpenAIChat', () => {
  it('replaces the model and keeps the messages', () => {
    expect(convertToOpenAIChat(base, 'gpt-4o-mini', false)).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  });

  const forwarded: Array<[keyof ChatCompletionRequest, unknown]> = [
    ['temperature', 0.2],
    ['top_p', 0.9],
    ['frequency_penalty', 0.5],
    ['presence_penalty', -0.5],
    ['max_completion_tokens', 100],
    ['max_tokens', 50],
    ['tools', [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }]],
    ['tool_choice', { type: 'function', function: { name: 'f' } }],
    ['parallel_tool_calls', false],
    ['prompt_cache_key', 'k1'],
    ['response_format', { type: 'json_schema', json_schema: { name: 's', strict: true, schema: { type: 'object' } } }],
    ['logprobs', true],
    ['top_logprobs', 3],
    ['stop', ['\n\n', 'END']],
    ['verbosity', 'low'],
    ['seed', 42],
    ['n', 2],
    ['logit_bias', { '50256': -100 }],
    ['user', 'end-user-1'],
    ['safety_identifier', 'hashed-user-1'],
  ];
  it.each(forwarded)('forwards %s unchanged', (field, value) => {
    const body = convertToOpenAIChat({ ...base, [field]: value }, 'm', false);
    expect(body[field]).toEqual(value);
  });

  it('sends the gateway\'s own fields nowhere', () => {
    const body = convertToOpenAIChat({ ...base, metadata: { user: 'u1' }, store: false, include: [], network_search: false }, 'm', false);
    expect(body).toEqual({ model: 'm', messages: base.messages });
  });

  it('covers every request field in the table above', () => {
    const tested = new Set(forwarded.map(([field]) => field));
    const notForwarded = Object.keys(OPENAI_CAPABILITIES.parameters).filter((f) => !tested.has(f as keyof ChatCompletionRequest));
    expect(notForwarded.sort()).toEqual([...Object.keys(GATEWAY_PARAMETERS), 'reasoning', 'top_k'].sort());
  });

  it.each([
    ['non-stream, caller asked for a stream', { stream: true, stream_options: { include_usage: false } }, false, {}],
    ['stream without include_usage', { stream: true }, true, { stream: true, stream_options: { include_usage: true } }],
    ['stream with include_usage false', { stream: true, stream_options: { include_usage: false } }, true, { stream: true, stream_options: { include_usage: true } }],
  ])('sets stream fields from the call kind: %s', (_name, fields, stream, expected) => {
    const body = convertToOpenAIChat({ ...base, ...fields }, 'm', stream);
    expect({ stream: body.stream, stream_options: body.stream_options }).toEqual({ stream: undefined, stream_options: undefined, ...expected });
  });

  it.each([
    [{ effort: 'high' as const }, { reasoning_effort: 'high' }],
    [{ enabled: true, effort: 'minimal' as const, max_tokens: 512, exclude: true }, { reasoning_effort: 'minimal' }],
    [{ enabled: false }, {}],
  ])('maps reasoning %j', (reasoning, expected) => {
    const body = convertToOpenAIChat({ ...base, reasoning }, 'm', false);
    expect(body).not.toHaveProperty('reasoning');
    expect(body).toEqual({ model: 'm', messages: base.messages, ...expected });
  });

  it('merges extra_body fields the gateway does not set', () => {
    const body = convertToOpenAIChat({ ...base, temperature: 1, extra_body: { repetition_penalty: 1.1, min_p: 0.05 } }, 'm', true);
    expect(body).toEqual({
      model: 'm', messages: base.messages, temperature: 1, repetition_penalty: 1.1, min_p: 0.05, stream: true, stream_options: { include_usage: true },
    });
  });

  it('forwards an extra_body field named __proto__ as a field, not as the body\'s prototype', () => {
    const body = convertToOpenAIChat({ ...base, extra_body: JSON.parse('{"__proto__":{"temperature":2},"min_p":0.05}') }, 'm', false);
    expect(JSON.parse(JSON.stringify(body))).toEqual({ model: 'm', messages: base.messages, ['__proto__']: { temperature: 2 }, min_p: 0.05 });
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });

  it('keeps only the known message fields', () => {
    const messages = [
      { role: 'system', content: 'sys', name: 'policy', extra: 'x' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://img' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', content: '42', tool_call_id: 'call_1' },
    ] as ChatCompletionRequest['messages'];
    const body = convertToOpenAIChat({ ...base, messages }, 'm', false);
    expect(body.messages).toEqual([
      { role: 'system', content: 'sys', name: 'policy' },
      messages[1],
      messages[2],
      messages[3],
    ]);
  });
});
