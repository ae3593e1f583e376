import { estimatePromptTokens } from './prompt-estimate';

describe('estimatePromptTokens', () => {
  it.each<[string, unknown[], number, number]>([
    ['counts each whitespace-separated word as at least a token', ['one two  three\nfour'], 1, 4 + 4],
    ['counts text without spaces by UTF-8 bytes / 5', ['x'.repeat(1000)], 1, 200 + 4],
    ['counts multi-byte text by its bytes', ['é'.repeat(500)], 1, 200 + 4],
    ['adds 4 tokens per message', [[{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }]], 2, 2 + 8],
    ['reads text in content parts', [[{ role: 'user', content: [{ type: 'text', text: 'a b c' }] }]], 1, 3 + 4],
    ['does not count image data or URLs', [[{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(50_000)}` } }] }]], 1, 0 + 4],
    ['does not count structural strings (roles, types, ids)', [[{ role: 'tool', tool_call_id: 'call_abc', content: 'ok' }]], 1, 1 + 4],
  ])('%s', (_what, parts, messages, expected) => {
    expect(estimatePromptTokens(parts, messages)).toBe(expected);
  });
});
