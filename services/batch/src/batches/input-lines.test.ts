import { Readable } from 'node:stream';
import { checkInputFile, inputRequests } from './input-lines';
import { jsonlLines } from './jsonl';

const line = (customId: string, model = 'm/one', extra: object = {}) =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: 'hi' }] }, ...extra });
/** Split at awkward places, as network chunks arrive. */
const chunks = (text: string, size = 7) => Readable.from(Array.from({ length: Math.ceil(text.length / size) }, (_, i) => Buffer.from(text.slice(i * size, (i + 1) * size))));
const check = (text: string, maxLineBytes = 1024) => checkInputFile(chunks(text), { endpoint: '/v1/chat/completions', maxLineBytes });

describe('batch input files', () => {
  it('splits lines across chunks, drops blank lines and CRs, and reports an overlong line without keeping it', async () => {
    const seen = [];
    for await (const l of jsonlLines(chunks(`a\r\n\n  \nbb\n${'x'.repeat(50)}\nlast`), 10)) seen.push(l);
    expect(seen).toEqual([{ line: 1, text: 'a' }, { line: 4, text: 'bb' }, { line: 5, text: null, unreadable: 'too_large' }, { line: 6, text: 'last' }]);
  });

  it('accepts a valid file: its one model and its count', async () => {
    expect(await check([line('a'), line('b'), line('c')].join('\n'))).toEqual({ clientModel: 'm/one', total: 3, problems: [] });
    const requests = [];
    for await (const r of inputRequests(chunks([line('a'), line('b')].join('\n')), '/v1/chat/completions', 1024)) requests.push(r.custom_id);
    expect(requests).toEqual(['a', 'b']);
  });

  it.each([
    ['not JSON', `${line('a')}\n{"custom_id":`, 'invalid_json', 2],
    ['not an object', `${line('a')}\n[1,2]`, 'invalid_json', 2],
    ['a missing custom_id', `${line('a')}\n${JSON.stringify({ method: 'POST', url: '/v1/chat/completions', body: {} })}`, 'invalid_custom_id', 2],
    ['a duplicate custom_id', `${line('a')}\n${line('a')}`, 'duplicate_custom_id', 2],
    ['another method', line('a', 'm/one', { method: 'GET' }), 'invalid_method', 1],
    ['another url', line('a', 'm/one', { url: '/v1/embeddings' }), 'invalid_url', 1],
    ['a body without messages', line('a', 'm/one', { body: { model: 'm/one' } }), 'invalid_body', 1],
    ['a body without a model', line('a', 'm/one', { body: { messages: [{ role: 'user', content: 'x' }] } }), 'invalid_body', 1],
    ['a streamed body', line('a', 'm/one', { body: { model: 'm/one', stream: true, messages: [{ role: 'user', content: 'x' }] } }), 'invalid_body', 1],
    ['two models', `${line('a')}\n${line('b', 'm/two')}`, 'mixed_models', 2],
    ['a line over the size limit', `${line('a')}\n${line('b'.repeat(2000))}`, 'line_too_large', 2],
    ['a field a line does not have', `${line('a')}\n${line('b', 'm/one', { metadata: { team: 'x' } })}`, 'unknown_parameter', 2],
  ])('reports %s with its code and line number', async (_what, text, code, lineNo) => {
    const result = await check(text);
    expect(result.problems).toEqual([expect.objectContaining({ code, line: lineNo, message: expect.stringContaining(`Line ${lineNo}`) })]);
  });

  // Before, such a line ran and failed with a 500: its body could not be serialized for the inference call.
  it('refuses a body out of the JSON bounds, naming the field, before anything runs', async () => {
    const deep = `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m/one","messages":[{"role":"user","content":"x"}],"metadata":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}}`;
    const infinite = line('b').replace('"content":"hi"}]', '"content":"hi"}],"n":1e400');
    const result = await check(`${deep}\n${infinite}`, 1024 * 1024);
    expect(result.problems).toEqual([
      { code: 'invalid_body', message: 'Line 1: body.metadata is nested more than 32 levels deep', param: 'body.metadata', line: 1 },
      { code: 'invalid_body', message: 'Line 2: body.n holds a number too large for JSON (such as 1e400)', param: 'body.n', line: 2 },
    ]);
  });

  it('names the field a line does not have, so a misplaced body field is not dropped', async () => {
    const result = await check(line('a', 'm/one', { temperature: 0 }));
    expect(result.problems).toEqual([{ code: 'unknown_parameter', message: 'Line 1: temperature is not a field of a batch line (custom_id, method, url, body); request fields go inside body', param: 'temperature', line: 1 }]);
  });

  it('reads past a UTF-8 byte order mark at the start of the file (editors on Windows write one)', async () => {
    expect(await check(`\uFEFF${line('a')}\n${line('b')}`)).toEqual({ clientModel: 'm/one', total: 2, problems: [] });
    const requests = [];
    for await (const r of inputRequests(chunks(`\uFEFF${line('a')}`, 1), '/v1/chat/completions', 1024)) requests.push(r.custom_id);
    expect(requests).toEqual(['a']);
  });

  it('reports a line that is not UTF-8 instead of sending its bytes on as replacement characters', async () => {
    const latin1 = Buffer.from(line('b').replace('hi', 'caf\u00e9'), 'latin1');
    const file = Buffer.concat([Buffer.from(`${line('a')}\n`), latin1, Buffer.from(`\n\uFEFF${line('c')}`)]);
    const result = await checkInputFile(Readable.from([file]), { endpoint: '/v1/chat/completions', maxLineBytes: 1024 });
    expect(result.total).toBe(3);
    expect(result.problems).toEqual([
      expect.objectContaining({ code: 'invalid_utf8', line: 2, message: 'Line 2: not valid UTF-8' }),
      // A byte order mark is skipped at the start of the file only; elsewhere it is a stray character.
      expect.objectContaining({ code: 'invalid_json', line: 3 }),
    ]);
  });

  it('keeps at most 100 problems but counts every line', async () => {
    const text = Array.from({ length: 150 }, () => 'nope').join('\n');
    const result = await check(text);
    expect(result.total).toBe(150);
    expect(result.problems).toHaveLength(100);
  });
});
