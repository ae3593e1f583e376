import { mapAnthropicFinishReason } from './map-anthropic-finish-reason';

describe('mapAnthropicFinishReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'stop'],
    ['pause_turn', 'stop'],
    ['a_future_reason', 'stop'],
    [null, 'stop'],
    [undefined, 'stop'],
  ])('%s -> %s', (reason, expected) => {
    expect(mapAnthropicFinishReason(reason)).toBe(expected);
  });
});
