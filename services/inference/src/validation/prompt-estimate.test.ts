import { countWords, estimatePromptTokens } from './prompt-estimate';

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

describe('countWords', () => {
  // Every character a regular expression's \s matches, and a few it does not (zero-width space, NEL, a letter).
  const spaces = ['\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2000', '\u2005', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];
  const notSpaces = ['\u200b', '\u0085', '\u180e', 'x', 'é', '😀'];
  const bySplit = (text: string) => text.split(/\s+/).filter((w) => w.length > 0).length;

  it.each(spaces)('splits words at U+%#', (space) => {
    expect(countWords(`a${space}b${space}${space}c`)).toBe(3);
  });

  it.each(notSpaces)('keeps words together across a non-space (case %#)', (c) => {
    expect(countWords(`a${c}b`)).toBe(1);
  });

  it('counts as split(/\\s+/) does on mixed text, leading and trailing space and empty strings', () => {
    const texts = ['', ' ', '  lead', 'trail  ', ' both ', 'one two  three\nfour', '\u3000全角\u3000スペース\u3000', 'tab\tsep\r\nline', 'x'.repeat(100)];
    const alphabet = [...spaces, ...notSpaces];
    let seed = 7;
    for (let i = 0; i < 200; i++) {
      let text = '';
      for (let j = 0; j < 12; j++) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        text += alphabet[seed % alphabet.length];
      }
      texts.push(text);
    }
    for (const text of texts) expect(countWords(text)).toBe(bySplit(text));
  });
});
