import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { api, expectEnvelope, type ApiResponse } from './harness/api';
import { E2E_MODEL } from './harness/catalog';
import { E2E_TRANSCRIBE_MODEL } from './harness/media-catalog';
import { useStack } from './harness/stack';

jest.setTimeout(60_000);

/** Sends bytes as they are to the edge and reads the answer until the edge closes the connection. */
function rawToEdge(baseURL: string, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(baseURL);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: rest.join('\r\n\r\n') });
    });
    socket.write(bytes);
  });
}

describe('hostile HTTP through the edge gets a 4xx in the envelope and never reaches a provider (embedded)', () => {
  const stack = useStack('embedded');
  const chat = JSON.stringify({ model: E2E_MODEL, messages: [{ role: 'user', content: 'hello' }] });

  /** Runs `send` and asserts the provider simulators received nothing meanwhile. */
  async function withoutUpstream(send: () => Promise<ApiResponse>): Promise<ApiResponse> {
    const before = stack.simulatorRequests!();
    const res = await send();
    expect(stack.simulatorRequests!()).toBe(before);
    return res;
  }

  it.each([
    ['GET', '/models/%ZZ', 'model_id'],
    ['GET', '/async/chat/completions/%ZZ', 'job_id'],
    ['POST', '/async/chat/completions/%ZZ/cancel', 'job_id'],
    ['GET', '/responses/%ZZ', 'response_id'],
    ['GET', '/billing/requests/%ZZ', 'request_id'],
    ['GET', '/billing/requests/resp_%E0%A4%A', 'request_id'],
  ])('%s %s: a bad percent-escape is a 400 naming %s', async (method, path, param) => {
    const res = await withoutUpstream(() => api(stack.baseURL, method, path, { key: stack.key }));
    expectEnvelope(res, 400, 'invalid_path_parameter', param);
    expect(res.headers.get('x-trace-id')).toBe(res.body.traceId);
  });

  it.each(['PATCH', 'DELETE'])('%s /keys/%%ZZ is a 400 naming hash in the key endpoints\' plain shape', async (method) => {
    const res = await withoutUpstream(() => api(stack.baseURL, method, '/keys/%ZZ', { key: stack.key, body: { disabled: true } }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 400, message: expect.any(String), param: 'hash' } });
  });

  /** A POST with exactly these headers and bytes (the `api` helper would set its own content-type). */
  async function post(path: string, headers: Record<string, string>, body: string | Buffer): Promise<ApiResponse> {
    const r = await fetch(`${stack.baseURL}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${stack.key}`, ...headers } });
    return { status: r.status, headers: r.headers, body: await r.json() };
  }

  it.each(['/chat/completions', '/async/chat/completions', '/responses', '/messages'])('POST %s with charset=latin1 is a 415 naming content-type', async (path) => {
    const res = await withoutUpstream(() => post(path, { 'content-type': 'application/json; charset=latin1' }, chat));
    expectEnvelope(res, 415, 'unsupported_charset', 'content-type');
  });

  it.each([
    ['/chat/completions', 'application/x-www-form-urlencoded'],
    ['/messages', 'text/plain'],
    ['/files', 'application/octet-stream'],
  ])('POST %s with a body sent as %s is a 415 naming content-type', async (path, contentType) => {
    const res = await withoutUpstream(() => post(path, { 'content-type': contentType }, chat));
    expectEnvelope(res, 415, 'unsupported_media_type', 'content-type');
  });

  it('the same in the key endpoints\' plain shape', async () => {
    const res = await post('/keys', { 'content-type': 'application/x-www-form-urlencoded' }, JSON.stringify({ name: 'k' }));
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: { code: 415, message: expect.any(String), param: 'content-type' } });
  });

  const garbage = 'certainly not compressed';
  it.each([
    ['x-foo', chat, 415, 'unsupported_content_encoding'],
    ['compress', chat, 415, 'unsupported_content_encoding'],
    ['gzip, gzip', gzipSync(gzipSync(chat)), 415, 'unsupported_content_encoding'],
    ['gzip', garbage, 400, 'invalid_content_encoding'],
    ['deflate', garbage, 400, 'invalid_content_encoding'],
  ])('a chat call with content-encoding %s is a %i naming content-encoding', async (encoding, body, status, code) => {
    const res = await withoutUpstream(() => post('/chat/completions', { 'content-type': 'application/json', 'content-encoding': encoding }, body));
    expectEnvelope(res, status, code, 'content-encoding');
  });

  it('a well-formed deflate chat call is served (the upstream counter sees real calls)', async () => {
    const before = stack.simulatorRequests!();
    const res = await post('/chat/completions', { 'content-type': 'application/json', 'content-encoding': 'deflate' }, deflateSync(chat));
    expect(res.status).toBe(200);
    expect(stack.simulatorRequests!()).toBe(before + 1);
  });

  // Each of these once ended the whole gateway: busboy's error on the unfinished file part had no listener.
  it.each([
    ['/audio/transcriptions', 'model', E2E_TRANSCRIBE_MODEL, null],
    ['/files', 'purpose', 'batch', 'file'],
  ])('POST %s with a multipart body cut short inside its file is a 400 invalid_multipart, and the gateway serves on', async (path, field, value, param) => {
    const cut = [
      `--cut\r\nContent-Disposition: form-data; name="${field}"\r\n\r\n${value}\r\n`,
      '--cut\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF',
    ].join('');
    const res = await withoutUpstream(() => post(path, { 'content-type': 'multipart/form-data; boundary=cut' }, cut));
    expectEnvelope(res, 400, 'invalid_multipart', param);
    expect((await api(stack.baseURL, 'GET', '/models')).status).toBe(200);
  });

  it.each([
    ['model twice', ['model', 'model'].map((f) => `--f\r\nContent-Disposition: form-data; name="${f}"\r\n\r\n${E2E_TRANSCRIBE_MODEL}\r\n`).join(''), 'invalid_type', 'model'],
    ['a field over 64 KiB', `--f\r\nContent-Disposition: form-data; name="prompt"\r\n\r\n${'x'.repeat(64 * 1024 + 1)}\r\n`, 'field_too_long', 'prompt'],
  ])('a transcription form with %s is a 400 naming the field, never sent on', async (_what, fields, code, param) => {
    const res = await withoutUpstream(() => post('/audio/transcriptions', { 'content-type': 'multipart/form-data; boundary=f' }, `${fields}--f--\r\n`));
    expectEnvelope(res, 400, code, param);
  });

  // The edge takes up to 16 KiB of request line and headers; the service behind a network hop gets the same plus
  // the signed identity token, which repeats the path. A long id once came back as a 431 from the service.
  it.each([
    ['/billing/requests/', ''],
    ['/billing/requests/', '/archive'],
    ['/files/', ''],
  ])('GET %s<15,000 characters>%s: the service behind the edge answers 404, not 431', async (prefix, suffix) => {
    const res = await withoutUpstream(() => api(stack.baseURL, 'GET', `${prefix}${'a'.repeat(15_000)}${suffix}`, { key: stack.key }));
    expect(res.status).toBe(404);
    expect(res.body.error.type).toBe('not_found_error');
  });

  it.each([
    ['oversized headers', 431, 'headers_too_large', null, `GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['a URL past 16 KiB', 414, 'uri_too_long', null, `GET /v1/billing/requests/${'a'.repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`],
    ['a malformed request line', 400, 'malformed_http_request', null, 'NOT AN HTTP REQUEST\r\n\r\n'],
    ['an Expect other than 100-continue', 417, 'expectation_failed', 'expect',
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nexpect: 42-nonsense\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(chat)}\r\n\r\n${chat}`],
  ])('the edge answers %s with %i in the envelope and closes', async (_what, status, code, param, bytes) => {
    const before = stack.simulatorRequests!();
    const res = await rawToEdge(stack.baseURL, bytes);
    expect(stack.simulatorRequests!()).toBe(before);
    expect(res.headers).toContain('connection: close');
    expectEnvelope({ status: res.status, headers: new Headers(), body: JSON.parse(res.body) }, status, code, param);
  });
});
