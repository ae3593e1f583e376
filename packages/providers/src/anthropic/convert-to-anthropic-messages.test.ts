import { InputError } from '@gw/platform';
import type { ChatMessage } from '@gw/provider-spec';
import { convertToAnthropicMessages, type AnthropicPrompt } from './convert-to-anthropic-messages';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });

describe('convertToAnthropicMessages', () => {
  const cases: Array<{ name: string; messages: ChatMessage[]; expected: AnthropicPrompt }> = [
    {
      name: 'a single user string stays a string',
      messages: [{ role: 'user', content: 'hi' }],
      expected: { messages: [{ role: 'user', content: 'hi' }] },
    },
    {
      name: 'system messages are hoisted to a top-level system string',
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }, { role: 'system', content: 'and kind' }],
      expected: { system: 'be brief\n\nand kind', messages: [{ role: 'user', content: 'hi' }] },
    },
    {
      name: 'developer messages count as system',
      messages: [{ role: 'developer' as ChatMessage['role'], content: [{ type: 'text', text: 'rules' }] }, { role: 'user', content: 'hi' }],
      expected: { system: 'rules', messages: [{ role: 'user', content: 'hi' }] },
    },
    {
      name: 'system parts with cache_control stay blocks',
      messages: [{ role: 'system', content: [{ type: 'text', text: 'long doc', cache_control: { type: 'ephemeral' } }] }, { role: 'user', content: 'q' }],
      expected: { system: [{ type: 'text', text: 'long doc', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'q' }] },
    },
    {
      name: 'consecutive same-role turns are merged',
      messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { role: 'assistant', content: 'c' }, { role: 'assistant', content: 'd' }],
      expected: {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'c' }, { type: 'text', text: 'd' }] },
        ],
      },
    },
    {
      name: 'image parts: data URLs become base64 sources, http(s) URLs url sources',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'compare' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
          ],
        },
      ],
      expected: {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'compare' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
      },
    },
    {
      name: 'other part types are passed on as given',
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }],
      expected: { messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }] },
    },
    {
      name: 'assistant tool calls become tool_use blocks and tool messages user tool_result blocks',
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        { role: 'assistant', content: 'Checking.', tool_calls: [call('toolu_1', 'get_weather', '{"city":"Paris"}'), call('toolu_2', 'get_weather', '')] },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '21C' }] },
        { role: 'user', content: 'thanks' },
      ],
      expected: {
        messages: [
          { role: 'user', content: 'weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
              { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '21C' }] },
              { type: 'text', text: 'thanks' },
            ],
          },
        ],
      },
    },
    {
      name: 'an assistant turn of only tool calls has no empty text block',
      messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: [call('toolu_9', 'f', '{}')] }],
      expected: { messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'f', input: {} }] }] },
    },
    {
      name: 'an empty assistant turn is dropped',
      messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: '' }, { role: 'user', content: 'b' }],
      expected: { messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }] },
    },
  ];

  it.each(cases)('$name', ({ messages, expected }) => {
    expect(convertToAnthropicMessages(messages)).toEqual(expected);
  });

  const invalid: Array<[string, ChatMessage[], string]> = [
    ['only system messages', [{ role: 'system', content: 'x' }], 'messages'],
    ['an unknown role', [{ role: 'function' as ChatMessage['role'], content: 'x' }], 'messages[0].role'],
    ['a tool message without tool_call_id', [{ role: 'tool', content: 'x' }], 'messages[0].tool_call_id'],
    ['tool call arguments that are not JSON', [{ role: 'assistant', content: null, tool_calls: [call('t', 'f', '{oops')] }], 'messages[0].tool_calls[0].function.arguments'],
    ['tool call arguments that are not an object', [{ role: 'assistant', content: null, tool_calls: [call('t', 'f', '[1]')] }], 'messages[0].tool_calls[0].function.arguments'],
    ['an image in a system message', [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }], 'messages[0].content[0].type'],
    ['an ftp image URL', [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }], 'messages[0].content[0].image_url.url'],
    ['a data URL that is not base64', [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/svg+xml,<svg/>' } }] }], 'messages[0].content[0].image_url.url'],
    ['a text part without text', [{ role: 'user', content: [{ type: 'text' } as never] }], 'messages[0].content[0].text'],
  ];
  it.each(invalid)('rejects %s', (_name, messages, param) => {
    const convert = () => convertToAnthropicMessages(messages);
    expect(convert).toThrow(InputError);
    try {
      convert();
    } catch (err) {
      expect(err).toMatchObject({ status: 400, param });
    }
  });
});
