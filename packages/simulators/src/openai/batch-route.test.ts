import * as recorded from '../../../providers/src/openai-compatible/fixtures/recorded-openai-batch-shapes';
import { startOpenAISimulator, type OpenAISimulator } from './openai-simulator';

const AUTH = { authorization: 'Bearer sk-test' };
// Bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json();
const keys = (o: object) => Object.keys(o).sort();

const chatLine = (customId: string, text: string, model = 'gpt-4o-mini') =>
  JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }] } });

describe('OpenAI simulator: files and batches', () => {
  let sim: OpenAISimulator;
  beforeAll(async () => {
    sim = await startOpenAISimulator();
  });
  afterAll(() => sim.close());

  async function upload(lines: string[], purpose = 'batch'): Promise<Response> {
    const form = new FormData();
    form.append('purpose', purpose);
    form.append('file', new Blob([lines.join('\n') + '\n']), 'input.jsonl');
    return fetch(`${sim.baseUrl}/files`, { method: 'POST', headers: AUTH, body: form });
  }
  const createBatch = (inputFileId: string, headers: Record<string, string> = {}) =>
    fetch(`${sim.baseUrl}/batches`, {
      method: 'POST', headers: { ...AUTH, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ input_file_id: inputFileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { k: 'v' } }),
    });
  const poll = async (id: string) => jsonOf(await fetch(`${sim.baseUrl}/batches/${id}`, { headers: AUTH }));
  const content = async (fileId: string) => (await (await fetch(`${sim.baseUrl}/files/${fileId}/content`, { headers: AUTH })).text()).trim().split('\n').map((l) => JSON.parse(l));

  async function batchOf(lines: string[]) {
    const file = await jsonOf(await upload(lines));
    return jsonOf(await createBatch(file.id));
  }

  it('takes a multipart upload and answers a file object shaped as OpenAI\'s', async () => {
    const res = await upload([chatLine('a', 'hi')]);
    expect(res.status).toBe(200);
    const file = await jsonOf(res);
    expect(keys(file)).toEqual(keys(recorded.batchInputFile));
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'input.jsonl', bytes: chatLine('a', 'hi').length + 1 });
    expect(await jsonOf(await fetch(`${sim.baseUrl}/files/${file.id}`, { headers: AUTH }))).toEqual(file);
  });

  it.each([
    ['another purpose', () => upload([chatLine('a', 'hi')], 'fine-tune'), 'purpose'],
    ['no multipart body', () => fetch(`${sim.baseUrl}/files`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{}' }), null],
  ])('refuses an upload with %s', async (_name, send, param) => {
    const res = await send();
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error.param).toBe(param);
  });

  it('moves a batch one step per poll to completed, with request_counts and output and error files', async () => {
    const created = await batchOf([chatLine('a', 'hello there'), chatLine('b', 'sim-error-429 slow down'), chatLine('c', 'bye')]);
    expect(keys(created)).toEqual(keys(recorded.validatingBatch));
    expect(created).toMatchObject({ object: 'batch', status: 'validating', endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { k: 'v' } });
    expect(created.expires_at - created.created_at).toBe(24 * 60 * 60);

    expect((await poll(created.id)).status).toBe('in_progress');
    expect((await poll(created.id)).status).toBe('finalizing');
    const done = await poll(created.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 3, completed: 2, failed: 1 }, completed_at: expect.any(Number) });
    expect(await poll(created.id)).toMatchObject({ status: 'completed' });

    const output = await content(done.output_file_id);
    expect(output.map((l) => l.custom_id).sort()).toEqual(['a', 'c']);
    expect(keys(output[0])).toEqual(keys(recorded.answeredLine));
    expect(output.find((l) => l.custom_id === 'a').response).toMatchObject({ status_code: 200, body: { object: 'chat.completion', choices: [{ message: { content: 'Echo: hello there' } }] } });
    const errors = await content(done.error_file_id);
    expect(errors).toEqual([{ id: expect.any(String), custom_id: 'b', response: { status_code: 429, request_id: expect.any(String), body: { error: expect.objectContaining({ code: 'rate_limit_exceeded' }) } }, error: null }]);
  });

  it('cancels: cancelling, then cancelled with every line batch_cancelled; a terminal batch cannot be cancelled', async () => {
    const created = await batchOf([chatLine('a', 'one'), chatLine('b', 'two')]);
    const cancel = () => fetch(`${sim.baseUrl}/batches/${created.id}/cancel`, { method: 'POST', headers: AUTH });
    expect(await jsonOf(await cancel())).toMatchObject({ status: 'cancelling', cancelling_at: expect.any(Number) });
    const ended = await poll(created.id);
    expect(ended).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(Number), output_file_id: null, request_counts: { failed: 2 } });
    expect((await content(ended.error_file_id)).map((l) => l.error.code)).toEqual(['batch_cancelled', 'batch_cancelled']);
    expect((await cancel()).status).toBe(409);
  });

  it('expires a sim-batch-expire batch after its first half of lines', async () => {
    const created = await batchOf(['a', 'b', 'c'].map((k) => chatLine(k, k, 'sim-batch-expire')));
    await poll(created.id);
    const ended = await poll(created.id);
    expect(keys(ended)).toEqual(keys(recorded.validatingBatch));
    expect(ended).toMatchObject({ status: 'expired', expired_at: expect.any(Number), request_counts: { total: 3, completed: 2, failed: 1 } });
    expect(await content(ended.error_file_id)).toEqual([{ ...recorded.expiredLine, id: expect.any(String), custom_id: 'c' }]);
  });

  it.each([
    ['a line that is not JSON', ['{nope'], 'invalid_request'],
    ['a line with another url', [JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/embeddings', body: { model: 'm' } })], 'invalid_request'],
    ['the sim-batch-fail model', [chatLine('a', 'x', 'sim-batch-fail')], 'invalid_request'],
  ])('fails a batch at validation for %s', async (_name, lines, code) => {
    const created = await batchOf(lines);
    expect(await poll(created.id)).toMatchObject({ status: 'failed', failed_at: expect.any(Number), errors: { object: 'list', data: [expect.objectContaining({ code })] } });
  });

  it('answers a repeated create with the same Idempotency-Key with the first batch', async () => {
    const file = await jsonOf(await upload([chatLine('a', 'x')]));
    const first = await jsonOf(await createBatch(file.id, { 'idempotency-key': 'k-1' }));
    const again = await createBatch(file.id, { 'idempotency-key': 'k-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await jsonOf(again)).id).toBe(first.id);
  });

  it.each([
    ['an unknown input file', () => createBatch('file-nope'), 400],
    ['an unknown batch', () => fetch(`${sim.baseUrl}/batches/batch_nope`, { headers: AUTH }), 404],
    ['an unknown file', () => fetch(`${sim.baseUrl}/files/file-nope/content`, { headers: AUTH }), 404],
    ['no key', () => fetch(`${sim.baseUrl}/batches`), 401],
  ])('answers %s with its OpenAI error', async (_name, send, status) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect((await jsonOf(res)).error).toEqual(expect.objectContaining({ message: expect.any(String), type: 'invalid_request_error' }));
  });
});
