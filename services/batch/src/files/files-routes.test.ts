import { BatchTestStack, chatLine, OTHER_ACCOUNT, uploadForm, waitFor, type BatchEngine, type BatchInstance } from '../test-support';

jest.setTimeout(60_000);

/** The files API on the real store and blob engines: on disk with the embedded store, GridFS with MongoDB. */
describe.each<BatchEngine>(['embedded', 'mongo'])('files API (%s store)', (engine) => {
  let stack: BatchTestStack;
  let batch: BatchInstance;

  beforeAll(async () => {
    stack = await BatchTestStack.start(engine);
    batch = await stack.startBatch({ FILE_MAX_LINES: '3', FILE_MAX_BYTES: '2048', BATCH_WORKERS: '0' });
  });
  afterAll(async () => stack?.close());

  const upload = (content: string, purpose: string | null = 'batch', accountId?: string) =>
    stack.call(batch, 'POST', '/v1/files', { form: uploadForm(content, purpose), accountId });

  it('stores an upload as an OpenAI file object and serves its bytes back', async () => {
    const content = `${chatLine('a', 'one')}\n${chatLine('b', 'two')}\n`;
    const res = await upload(content);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^file-/), object: 'file', bytes: Buffer.byteLength(content), created_at: expect.any(Number), filename: 'input.jsonl',
      purpose: 'batch', expires_at: res.body.created_at + 30 * 24 * 3600, status: 'processed',
    });
    expect((await stack.call(batch, 'GET', `/v1/files/${res.body.id}`)).body).toEqual(res.body);
    expect((await stack.call(batch, 'GET', `/v1/files/${res.body.id}/content`)).body).toBe(content);
  });

  const withField = (form: FormData, name: string, value: string) => { form.append(name, value); return form; };
  it.each([
    ['more lines than FILE_MAX_LINES', () => upload([1, 2, 3, 4].map((n) => chatLine(`l${n}`, 'x')).join('\n')), 'file', 'too_many_lines'],
    ['more bytes than FILE_MAX_BYTES', () => upload('x'.repeat(2049)), 'file', 'file_too_large'],
    ['no purpose', () => upload(chatLine('a', 'x'), null), 'purpose', 'invalid_request'],
    ['another purpose', () => upload(chatLine('a', 'x'), 'assistants'), 'purpose', 'invalid_request'],
    ['an empty file', () => upload(''), 'file', 'empty_file'],
    ['a file name of 256 characters', () => stack.call(batch, 'POST', '/v1/files', { form: uploadForm(chatLine('a', 'x'), 'batch', `${'n'.repeat(250)}.jsonl`) }), 'file', 'invalid_value'],
    ['no file part', () => stack.call(batch, 'POST', '/v1/files', { form: (() => { const f = new FormData(); f.append('purpose', 'batch'); return f; })() }), 'file', 'invalid_request'],
    ['purpose given twice', () => stack.call(batch, 'POST', '/v1/files', { form: withField(uploadForm(chatLine('a', 'x')), 'purpose', 'batch') }), 'purpose', 'invalid_request'],
    ['a form field the upload does not have', () => stack.call(batch, 'POST', '/v1/files', { form: withField(uploadForm(chatLine('a', 'x')), 'expires_after[seconds]', '3600') }), 'expires_after[seconds]', 'unknown_parameter'],
  ])('refuses %s with a 400 naming its param, keeping nothing', async (_what, send, param, code) => {
    const before = (await stack.blobs.list('files/')).length;
    const res = await send();
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param, code });
    expect((await stack.blobs.list('files/')).length).toBe(before);
  });

  it('keeps a file name of 255 characters whole', async () => {
    const filename = `${'n'.repeat(249)}.jsonl`;
    const res = await stack.call(batch, 'POST', '/v1/files', { form: uploadForm(chatLine('a', 'x'), 'batch', filename) });
    expect(res.status).toBe(200);
    expect(res.body.filename).toBe(filename);
  });

  // Before, busboy's error on the unfinished file part had no listener: one such upload ended the process.
  it.each([
    ['inside the file part', `--cut\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--cut\r\nContent-Disposition: form-data; name="file"; filename="in.jsonl"\r\n\r\n${chatLine('a', 'x')}\n`],
    ['inside a text field', '--cut\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbat'],
  ])('refuses a form cut short %s with a 400 invalid_multipart, keeping nothing, and serves on', async (_where, body) => {
    const before = (await stack.blobs.list('files/')).length;
    const res = await stack.call(batch, 'POST', '/v1/files', { raw: { contentType: 'multipart/form-data; boundary=cut', body } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'file', code: 'invalid_multipart' });
    expect((await stack.blobs.list('files/')).length).toBe(before);
    expect((await upload(chatLine('b', 'y'))).status).toBe(200);
  });

  it('refuses a body that is not multipart with a 415 naming file', async () => {
    const res = await stack.call(batch, 'POST', '/v1/files', { body: { purpose: 'batch' } });
    expect(res.status).toBe(415);
    expect(res.body.error).toMatchObject({ param: 'file' });
  });

  it('lists newest first (oldest with order=asc) with after/limit cursors, and every file is its account\'s alone', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await upload(chatLine(`c${i}`, 'x'), 'batch', OTHER_ACCOUNT)).body.id);
      // Distinct creation times: files made in the same millisecond have no order to test.
      await new Promise((r) => setTimeout(r, 5));
    }
    const first = await stack.call(batch, 'GET', '/v1/files?limit=2', { accountId: OTHER_ACCOUNT });
    expect(first.body).toMatchObject({ object: 'list', first_id: ids[2], last_id: ids[1], has_more: true });
    expect(first.body.data.map((f: { id: string }) => f.id)).toEqual([ids[2], ids[1]]);
    const next = await stack.call(batch, 'GET', `/v1/files?limit=2&after=${ids[1]}`, { accountId: OTHER_ACCOUNT });
    expect(next.body).toMatchObject({ data: [{ id: ids[0] }], has_more: false });
    // OpenAI's files list takes order=asc for oldest first; the cursor walks on in that order.
    const oldest = await stack.call(batch, 'GET', '/v1/files?limit=2&order=asc', { accountId: OTHER_ACCOUNT });
    expect(oldest.body).toMatchObject({ first_id: ids[0], last_id: ids[1], has_more: true });
    const newer = await stack.call(batch, 'GET', `/v1/files?limit=2&order=asc&after=${ids[1]}`, { accountId: OTHER_ACCOUNT });
    expect(newer.body).toMatchObject({ data: [{ id: ids[2] }], has_more: false });
    expect((await stack.call(batch, 'GET', '/v1/files?order=desc', { accountId: OTHER_ACCOUNT })).body.first_id).toBe(ids[2]);
    for (const bad of ['limit=0', 'limit=101', 'limit=x', 'after=file-unknown', 'order=sideways', 'order=ASC']) {
      const res = await stack.call(batch, 'GET', `/v1/files?${bad}`, { accountId: OTHER_ACCOUNT });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(bad.split('=')[0]);
    }
    // The owner's list never shows another account's files, and their ids answer 404 to anyone else.
    expect((await stack.call(batch, 'GET', '/v1/files?limit=100')).body.data.map((f: { id: string }) => f.id)).not.toContain(ids[0]);
    for (const [method, path] of [['GET', `/v1/files/${ids[0]}`], ['GET', `/v1/files/${ids[0]}/content`], ['DELETE', `/v1/files/${ids[0]}`]]) {
      expect((await stack.call(batch, method, path)).status).toBe(404);
    }
    expect((await stack.call(batch, 'DELETE', `/v1/files/${ids[0]}`, { accountId: OTHER_ACCOUNT })).body).toEqual({ id: ids[0], object: 'file', deleted: true });
    expect((await stack.call(batch, 'GET', `/v1/files/${ids[0]}/content`, { accountId: OTHER_ACCOUNT })).status).toBe(404);
    expect(await stack.blobs.stat(`files/${ids[0]}`)).toBeNull();
  });

  it('answers 404 in the envelope for a file whose bytes went while its record was read (a delete racing the download)', async () => {
    const id = (await upload(chatLine('a', 'x'))).body.id;
    // The moment inside a concurrent DELETE or expiry: the record read, the bytes already removed.
    await stack.blobs.delete(`files/${id}`);
    const res = await stack.call(batch, 'GET', `/v1/files/${id}/content`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: '404', error: { param: 'file_id', code: 'file_not_found' } });
    // A batch created over it at that moment: the input file is not found, never a 500.
    const created = await stack.call(batch, 'POST', '/v1/batches', { body: { input_file_id: id, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(created.status).toBe(404);
    expect(created.body.error).toMatchObject({ param: 'input_file_id', code: 'file_not_found' });
  });

  it('deletes files past their expiry, record and bytes', async () => {
    const shortLived = await stack.startBatch({ FILE_EXPIRES_AFTER_S: '1', BATCH_MAINTENANCE_MS: '100', BATCH_WORKERS: '0' });
    const file = (await stack.call(shortLived, 'POST', '/v1/files', { form: uploadForm(chatLine('a', 'x')) })).body;
    expect(file.expires_at).toBe(file.created_at + 1);
    await waitFor('the expired file deleted', async () => (await stack.call(shortLived, 'GET', `/v1/files/${file.id}`)).status === 404, 10_000);
    expect(await stack.blobs.stat(`files/${file.id}`)).toBeNull();
    await shortLived.stop();
  });

  it('refuses to delete the input of a batch that has not finished (409); the file stays', async () => {
    const file = (await upload(chatLine('a', 'x'))).body;
    const created = await stack.call(batch, 'POST', '/v1/batches', { body: { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(created.body).toMatchObject({ status: 'in_progress' });
    const res = await stack.call(batch, 'DELETE', `/v1/files/${file.id}`);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('file_in_use');
    expect((await stack.call(batch, 'GET', `/v1/files/${file.id}`)).status).toBe(200);
  });
});
