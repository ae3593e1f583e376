import { mapOpenAIFinishReason } from './map-openai-finish-reason';

describe('mapOpenAIFinishReason', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['content_filter', 'stop'],
    ['something_new', 'stop'],
    [null, 'stop'],
    [undefined, 'stop'],
  ])('%s -> %s', (upstream, ours) => {
    expect(mapOpenAIFinishReason(upstream)).toBe(ours);
  });
});
