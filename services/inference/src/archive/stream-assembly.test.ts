import type { ChatCompletionChunk } from '@gw/provider-spec';
import { ChatStreamAssembler, nativeStreamAssembler } from './stream-assembly';

const chunk = (choices: ChatCompletionChunk['choices'], usage?: ChatCompletionChunk['usage']): ChatCompletionChunk =>
  ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 7, model: 'm-1', choices, ...(usage ? { usage } : {}) });

describe('streams reassembled for the archive', () => {
  test('chat chunks: text, tool-call fragments, finish reason and usage in one completion', () => {
    const a = new ChatStreamAssembler();
    a.add(chunk([{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a"' } }] }, finish_reason: null }]));
    a.add(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: 'tool_calls' }]));
    a.add(chunk([], { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }));
    expect(a.result()).toEqual({
      id: 'chatcmpl-1', object: 'chat.completion', created: 7, model: 'm-1',
      choices: [{
        index: 0, finish_reason: 'tool_calls',
        message: { role: 'assistant', content: 'Hello', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }] },
      }],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
  });

  test('messages events: the message with its content blocks rebuilt and the final usage', () => {
    const a = nativeStreamAssembler('messages');
    const events = [
      { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'c', content: [], usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'there' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'tu_1', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"q":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"x"}' } },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ];
    for (const e of events) a.add({ event: e.type, data: JSON.stringify(e) });
    a.add({ event: 'ping', data: 'not json' });
    expect(a.result()).toEqual({
      id: 'msg_1', type: 'message', role: 'assistant', model: 'c', stop_reason: 'tool_use', stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 9 },
      content: [{ type: 'text', text: 'Hi there' }, { type: 'tool_use', id: 'tu_1', name: 'f', input: { q: 'x' } }],
    });
  });

  test('responses events: the terminal event\'s response; a cut stream keeps its text', () => {
    const done = nativeStreamAssembler('responses');
    done.add({ event: 'response.output_text.delta', data: JSON.stringify({ type: 'response.output_text.delta', delta: 'Hi' }) });
    done.add({ event: 'response.completed', data: JSON.stringify({ type: 'response.completed', response: { id: 'resp_1', status: 'completed' } }) });
    expect(done.result()).toEqual({ id: 'resp_1', status: 'completed' });

    const cut = nativeStreamAssembler('responses');
    cut.add({ event: 'response.output_text.delta', data: JSON.stringify({ type: 'response.output_text.delta', delta: 'Hal' }) });
    expect(cut.result()).toEqual({ object: 'response', status: 'incomplete', output_text: 'Hal' });
  });
});
