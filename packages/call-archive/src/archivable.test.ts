import { archivableCopy } from './archivable';
import { REDACTED } from './redact';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(3000, 7)]);
const WAV = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.alloc(5000, 1)]);

describe('media in an archived body is described, never kept', () => {
  test('an image answer: b64_json becomes its type and size; the record id beside it stays', () => {
    const answer = { created: 1, data: [{ id: 'img_1', b64_json: PNG.toString('base64'), output_format: 'png' }] };
    expect(archivableCopy(answer)).toEqual({
      created: 1, data: [{ id: 'img_1', b64_json: { omitted: 'base64', content_type: 'image/png', bytes: PNG.length }, output_format: 'png' }],
    });
  });

  test('a data URL in a chat message, raw bytes (a multipart upload) and base64 audio in a known field', () => {
    const body = {
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/jpeg;base64,${Buffer.alloc(900, 9).toString('base64')}` } }] }],
      file: { filename: 'a.wav', bytes: WAV },
      audio_data: Buffer.alloc(600, 3).toString('base64'),
    };
    expect(archivableCopy(body)).toEqual({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: { omitted: 'base64', content_type: 'image/jpeg', bytes: 900 } } }] }],
      file: { filename: 'a.wav', bytes: { omitted: 'binary', content_type: 'audio/wav', bytes: WAV.length } },
      audio_data: { omitted: 'base64', bytes: 600 },
    });
  });

  test('text is kept: prose, short base64-looking ids, and long letters that are no known media in no media field', () => {
    const body = { prompt: 'a cat '.repeat(100), id: 'chatcmpl-AbC123', content: 'x'.repeat(2000), url: 'https://example.com/a.png' };
    expect(archivableCopy(body)).toEqual(body);
  });

  test('media and credentials in one body, at any depth: described and redacted in the same copy, and a body deeper than the bound is cut', () => {
    const b64 = PNG.toString('base64');
    const body = {
      api_key: b64,
      data: [{ b64_json: b64, note: `token Bearer ${'a'.repeat(300)}` }],
      deep: { a: { b: { c: [{ password: 'p', image: `data:image/png;base64,${b64}` }] } } },
    };
    expect(archivableCopy(body)).toEqual({
      api_key: REDACTED,
      data: [{ b64_json: { omitted: 'base64', content_type: 'image/png', bytes: PNG.length }, note: `token ${REDACTED}` }],
      deep: { a: { b: { c: [{ password: REDACTED, image: { omitted: 'base64', content_type: 'image/png', bytes: PNG.length } }] } } },
    });
    let nested: Record<string, unknown> = { secret_text: 'sk-0123456789abcdef0123' };
    for (let i = 0; i < 80; i++) nested = { n: nested };
    expect(JSON.stringify(archivableCopy(nested))).not.toContain('sk-0123456789abcdef0123');
    expect(JSON.stringify(archivableCopy(nested))).toContain(REDACTED);
  });

  test('a caller\'s __proto__ key is archived as the field it is, redacted like any other', () => {
    const body = JSON.parse('{"extra_body":{"__proto__":{"api_key":"sk-live-0123456789abcdef","note":"x"}}}') as Record<string, unknown>;
    const copy = archivableCopy(body) as { extra_body: Record<string, unknown> };
    expect(Object.getPrototypeOf(copy.extra_body)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(copy))).toEqual(JSON.parse(`{"extra_body":{"__proto__":{"api_key":"${REDACTED}","note":"x"}}}`));
  });
});
