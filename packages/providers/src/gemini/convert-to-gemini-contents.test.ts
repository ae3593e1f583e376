import { InputError } from '@gw/platform';
import type { ChatMessage } from '@gw/provider-spec';
import { convertToGeminiContents } from './convert-to-gemini-contents';
import { guessMimeType } from './convert-to-gemini-parts';

const msgs = (...m: object[]) => m as ChatMessage[];
const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('convertToGeminiContents', () => {
  const cases: Array<[string, ChatMessage[], unknown]> = [
    ['a user string', msgs({ role: 'user', content: 'hi' }), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
    [
      'system and developer messages become the system instruction, in order',
      msgs({ role: 'system', content: 'be brief' }, { role: 'developer', content: [{ type: 'text', text: 'use metric' }] }, { role: 'user', content: 'q' }),
      { systemInstruction: { parts: [{ text: 'be brief' }, { text: 'use metric' }] }, contents: [{ role: 'user', parts: [{ text: 'q' }] }] },
    ],
    [
      'assistant turns use the model role',
      msgs({ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }),
      { contents: [{ role: 'user', parts: [{ text: 'a' }] }, { role: 'model', parts: [{ text: 'b' }] }, { role: 'user', parts: [{ text: 'c' }] }] },
    ],
    [
      'consecutive turns of one role are merged',
      msgs({ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { role: 'assistant', content: 'c' }, { role: 'assistant', content: 'd' }),
      { contents: [{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }, { role: 'model', parts: [{ text: 'c' }, { text: 'd' }] }] },
    ],
    [
      'multimodal parts: data URL, http URL, audio, file',
      msgs({
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cats/photo.JPG?size=large', detail: 'high' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          { type: 'image_url', image_url: { url: 'data:text/plain,hello%20world' } },
        ],
      }),
      {
        contents: [
          {
            role: 'user',
            parts: [
              { text: 'look' },
              { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
              { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cats/photo.JPG?size=large' } },
              { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
              { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
              { inlineData: { mimeType: 'text/plain', data: Buffer.from('hello world').toString('base64') } },
            ],
          },
        ],
      },
    ],
    [
      'assistant tool calls become function calls; tool results function responses named from the call id',
      msgs(
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [call('call_1', 'get_weather', '{"city":"Paris"}'), call('call_2', 'get_time', '')] },
        { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
        { role: 'user', content: 'thanks' },
      ),
      {
        contents: [
          { role: 'user', parts: [{ text: 'weather?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_time', args: {} } }] },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'get_time', response: { content: '12:00' } } },
              { functionResponse: { name: 'get_weather', response: { content: 'sunny' } } },
              { text: 'thanks' },
            ],
          },
        ],
      },
    ],
    [
      'assistant text and tool calls in one turn',
      msgs({ role: 'user', content: 'x' }, { role: 'assistant', content: 'Let me check.', tool_calls: [call('c', 'f', '{}')] }),
      { contents: [{ role: 'user', parts: [{ text: 'x' }] }, { role: 'model', parts: [{ text: 'Let me check.' }, { functionCall: { name: 'f', args: {} } }] }] },
    ],
    [
      'an assistant refusal part is replayed as text',
      msgs({ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] }),
      { contents: [{ role: 'user', parts: [{ text: 'x' }] }, { role: 'model', parts: [{ text: 'I cannot.' }] }] },
    ],
    [
      'an empty assistant turn is left out',
      msgs({ role: 'user', content: 'a' }, { role: 'assistant', content: null }, { role: 'user', content: 'b' }),
      { contents: [{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }] },
    ],
  ];

  it.each(cases)('%s', (_name, messages, expected) => {
    expect(convertToGeminiContents(messages)).toEqual(expected);
  });

  it('signs the first replayed function call of each step for models that require thought signatures', () => {
    const messages = msgs({ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [call('a', 'f', '{}'), call('b', 'g', '{}')] });
    const parts = convertToGeminiContents(messages, { needsThoughtSignatures: true }).contents[1].parts;
    expect(parts.map((p) => p.thoughtSignature)).toEqual(['skip_thought_signature_validator', undefined]);
    expect(convertToGeminiContents(messages).contents[1].parts.every((p) => p.thoughtSignature === undefined)).toBe(true);
  });

  const rejected: Array<[string, ChatMessage[], string]> = [
    ['an http URL without a known extension', msgs({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/image' } }] }), 'messages[0].content[0].image_url.url'],
    ['an unsupported URL scheme', msgs({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'ftp://x/a.png' } }] }), 'messages[0].content[1].image_url.url'],
    ['a data URL without a media type', msgs({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:;base64,AAAA' } }] }), 'messages[0].content[0].image_url.url'],
    ['an unknown part type', msgs({ role: 'user', content: [{ type: 'video_url', video_url: {} }] }), 'messages[0].content[0].type'],
    ['an audio format Gemini does not take inline', msgs({ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'm4a' } }] }), 'messages[0].content[0].input_audio.format'],
    ['a file id', msgs({ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }), 'messages[0].content[0].file'],
    ['an image in a system message', msgs({ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png' } }] }, { role: 'user', content: 'q' }), 'messages[0].content[0].type'],
    ['a tool result for an unknown call', msgs({ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'call_x', content: '1' }), 'messages[1].tool_call_id'],
    ['tool call arguments that are not JSON', msgs({ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [call('c', 'f', '{oops')] }), 'messages[1].tool_calls[0].function.arguments'],
    ['tool call arguments that are not an object', msgs({ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [call('c', 'f', '[1]')] }), 'messages[1].tool_calls[0].function.arguments'],
    ['only system messages', msgs({ role: 'system', content: 'x' }), 'messages'],
    ['an unknown role', msgs({ role: 'function', content: 'x' }), 'messages[0].role'],
  ];

  it.each(rejected)('rejects %s with an InputError naming the param', (_name, messages, param) => {
    let error: unknown;
    try {
      convertToGeminiContents(messages);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InputError);
    expect(error).toMatchObject({ status: 400, param });
  });
});

describe('guessMimeType', () => {
  it.each([
    ['https://x/a.png', 'image/png'],
    ['https://x/a.jpeg', 'image/jpeg'],
    ['https://x/dir.v2/a.webp#frag', 'image/webp'],
    ['https://x/doc.PDF', 'application/pdf'],
    ['https://x/clip.mp4?t=3', 'video/mp4'],
    ['https://x/song.mp3', 'audio/mp3'],
    ['https://x/dir.png/file', undefined],
    ['https://x/archive.zip', undefined],
    ['not a url', undefined],
  ])('%s -> %s', (url, mime) => {
    expect(guessMimeType(url)).toBe(mime);
  });
});
