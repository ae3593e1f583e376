import { isGeminiRefusal, mapGeminiFinishReason } from './map-gemini-finish-reason';

describe('mapGeminiFinishReason', () => {
  it.each([
    ['STOP', false, 'stop', false],
    ['STOP', true, 'tool_calls', false],
    ['MAX_TOKENS', false, 'length', false],
    ['MAX_TOKENS', true, 'length', false],
    ['SAFETY', false, 'stop', true],
    ['RECITATION', false, 'stop', true],
    ['PROHIBITED_CONTENT', false, 'stop', true],
    ['BLOCKLIST', false, 'stop', true],
    ['SPII', false, 'stop', true],
    ['SAFETY', true, 'stop', true],
    ['MALFORMED_FUNCTION_CALL', false, 'stop', false],
    ['OTHER', false, 'stop', false],
    ['FINISH_REASON_UNSPECIFIED', false, 'stop', false],
    ['SOMETHING_NEW', true, 'tool_calls', false],
    [null, false, 'stop', false],
    [undefined, true, 'tool_calls', false],
  ])('%s (function call: %s) -> %s, refusal %s', (reason, hasFunctionCall, ours, refusal) => {
    expect(mapGeminiFinishReason(reason, hasFunctionCall)).toBe(ours);
    expect(isGeminiRefusal(reason)).toBe(refusal);
  });
});
