import { answer, countWords, messageText, splitWords } from './simulated-chat';

describe('simulated chat', () => {
  it.each([
    ['', 0],
    ['one', 1],
    ['  two words ', 2],
    ['tabs\tand\nnewlines  here', 4],
  ])('countWords(%j) = %i', (text, n) => {
    expect(countWords(text)).toBe(n);
    expect(splitWords(text)).toHaveLength(n);
  });

  it('reads text parts of structured content', () => {
    expect(messageText([{ type: 'text', text: 'a b' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'c' }])).toBe('a b c');
  });

  it('echoes the last user message and counts words of all messages', () => {
    const a = answer(
      [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'hello there world' },
      ],
      { callId: 'c' },
    );
    expect(a).toEqual({ words: ['Echo:', 'hello', 'there', 'world'], finishReason: 'stop', promptTokens: 8, completionTokens: 4 });
  });

  it('truncates to the token cap with finish_reason length', () => {
    const a = answer([{ role: 'user', content: 'a b c d' }], { maxTokens: 2, callId: 'c' });
    expect(a).toMatchObject({ words: ['Echo:', 'a'], finishReason: 'length', completionTokens: 2 });
  });

  it('counts at least one prompt token', () => {
    expect(answer([{ role: 'user', content: '' }], { callId: 'c' }).promptTokens).toBe(1);
  });

  it('answers with a tool call when a tool name is given', () => {
    const a = answer([{ role: 'user', content: 'weather in Paris' }], { toolName: 'get_weather', callId: 'call_1' });
    expect(a.toolCall).toEqual({ id: 'call_1', name: 'get_weather', arguments: '{"query":"weather in Paris"}' });
    expect(a).toMatchObject({ words: [], finishReason: 'tool_calls', completionTokens: 3 });
  });
});
