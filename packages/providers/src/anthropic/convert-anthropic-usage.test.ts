import { AnthropicStreamUsage, convertAnthropicUsage } from './convert-anthropic-usage';

describe('convertAnthropicUsage', () => {
  it.each([
    ['plain counts', { input_tokens: 10, output_tokens: 5 }, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }],
    [
      'cache writes and reads are prompt tokens',
      { input_tokens: 12, cache_creation_input_tokens: 2051, cache_read_input_tokens: 300, output_tokens: 9 },
      { prompt_tokens: 2363, completion_tokens: 9, total_tokens: 2372 },
    ],
    ['null cache counts are ignored', { input_tokens: 4, cache_creation_input_tokens: null, cache_read_input_tokens: null, output_tokens: 1 }, { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 }],
    ['only output reported', { output_tokens: 15 }, { completion_tokens: 15 }],
    ['nothing reported', null, {}],
  ])('%s', (_name, usage, expected) => {
    expect(convertAnthropicUsage(usage, undefined)).toEqual(expected);
  });

  it('adds the provider request id', () => {
    expect(convertAnthropicUsage({ input_tokens: 1, output_tokens: 1 }, 'req_1')).toMatchObject({ provider_request_id: 'req_1' });
  });
});

describe('AnthropicStreamUsage', () => {
  it('takes input from message_start and the final output from message_delta', () => {
    const usage = new AnthropicStreamUsage();
    usage.add({ input_tokens: 25, cache_read_input_tokens: 10, output_tokens: 1 });
    usage.add({ output_tokens: 15 });
    expect(usage.current(undefined)).toEqual({ prompt_tokens: 35, completion_tokens: 15, total_tokens: 50 });
  });

  it('lets cumulative counts on message_delta win', () => {
    const usage = new AnthropicStreamUsage();
    usage.add({ input_tokens: 25, output_tokens: 1 });
    usage.add({ input_tokens: 30, cache_creation_input_tokens: 5, output_tokens: 40 });
    expect(usage.current('req_x')).toEqual({ prompt_tokens: 35, completion_tokens: 40, total_tokens: 75, provider_request_id: 'req_x' });
  });

  it('is null before any usage was seen', () => {
    expect(new AnthropicStreamUsage().current('req_x')).toBeNull();
  });
});
