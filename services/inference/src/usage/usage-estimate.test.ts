import { estimatedTokens } from '@gw/billed-call';
import type { ChatCompletionChunk } from '@gw/provider-spec';
import { chatChunkChars, nativeEventChars, promptChars } from './usage-estimate';

const chunk = (delta: ChatCompletionChunk['choices'][number]['delta']): ChatCompletionChunk =>
  ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] });

describe('usage estimates for calls the provider never reported', () => {
  it('rounds characters up to tokens at four per token', () => {
    expect([0, 1, 4, 5, 400].map(estimatedTokens)).toEqual([0, 1, 1, 2, 100]);
  });

  it('counts the text of a prompt, however nested, but not inline data or URLs', () => {
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'abcd' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      { role: 'assistant', content: 'efgh' },
    ];
    // 'user' + 'text' + 'abcd' + 'image_url' + 'assistant' + 'efgh'
    expect(promptChars(messages)).toBe(4 + 4 + 4 + 9 + 9 + 4);
    expect(promptChars([undefined, null, 3, 'https://example.com/a.png'])).toBe(0);
  });

  it('counts generated chat text: content, refusal, reasoning and tool arguments, not roles or ids', () => {
    expect(chatChunkChars(chunk({ role: 'assistant', content: '' }))).toBe(0);
    expect(chatChunkChars(chunk({ content: 'hello', reasoning: 'hm' }))).toBe(7);
    expect(chatChunkChars(chunk({ refusal: 'no' }))).toBe(2);
    expect(chatChunkChars(chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }))).toBe(7);
    expect(chatChunkChars({ ...chunk({}), choices: [] })).toBe(0);
  });

  it('counts generated native text from Responses and Messages deltas only', () => {
    expect(nativeEventChars({ event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"hello"}' })).toBe(5);
    expect(nativeEventChars({ event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abc"}}' })).toBe(3);
    expect(nativeEventChars({ event: 'content_block_delta', data: '{"delta":{"type":"input_json_delta","partial_json":"{\\"x\\""}}' })).toBe(4);
    expect(nativeEventChars({ event: 'response.created', data: '{"type":"response.created","response":{"instructions":"long text"}}' })).toBe(0);
    expect(nativeEventChars({ data: '{"delta": not json' })).toBe(0);
  });
});
