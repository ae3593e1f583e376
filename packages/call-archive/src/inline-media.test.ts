import { withoutInlineMedia } from './inline-media';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(3000, 7)]);
const WAV = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.alloc(5000, 1)]);

describe('media in an archived body is described, never kept', () => {
  test('an image answer: b64_json becomes its type and size; the record id beside it stays', () => {
    const answer = { created: 1, data: [{ id: 'img_1', b64_json: PNG.toString('base64'), output_format: 'png' }] };
    expect(withoutInlineMedia(answer)).toEqual({
      created: 1, data: [{ id: 'img_1', b64_json: { omitted: 'base64', content_type: 'image/png', bytes: PNG.length }, output_format: 'png' }],
    });
  });

  test('a data URL in a chat message, raw bytes (a multipart upload) and base64 audio in a known field', () => {
    const body = {
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/jpeg;base64,${Buffer.alloc(900, 9).toString('base64')}` } }] }],
      file: { filename: 'a.wav', bytes: WAV },
      audio_data: Buffer.alloc(600, 3).toString('base64'),
    };
    expect(withoutInlineMedia(body)).toEqual({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: { omitted: 'base64', content_type: 'image/jpeg', bytes: 900 } } }] }],
      file: { filename: 'a.wav', bytes: { omitted: 'binary', content_type: 'audio/wav', bytes: WAV.length } },
      audio_data: { omitted: 'base64', bytes: 600 },
    });
  });

  test('text is kept: prose, short base64-looking ids, and long letters that are no known media in no media field', () => {
    const body = { prompt: 'a cat '.repeat(100), id: 'chatcmpl-AbC123', content: 'x'.repeat(2000), url: 'https://example.com/a.png' };
    expect(withoutInlineMedia(body)).toEqual(body);
  });
});
