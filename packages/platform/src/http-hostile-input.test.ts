import { Router } from 'express';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { deflateSync, gzipSync } from 'node:zlib';
import { InputError, NotImplementedError, OverloadedError } from './errors';
import { Health } from './health';
import { closeServer, createHttpApp, finishHttpApp, listen } from './http';
import { createLogger, type Logger } from './logger';

interface RawAnswer { status: number; headers: Record<string, string>; body: string }

/** Sends bytes as they are (no client library fixes them up) and reads the answer until the server closes. */
function rawRequest(port: number, bytes: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    // Half-close after the bytes, as a client that sent all it had: a short body can then never complete.
    socket.end(bytes);
  });
}

/** Collects a logger's JSON lines so a test can assert what was logged and at which level. */
function capturingLogger(level = 'debug'): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const raw: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { raw.push(chunk.toString()); done(); } });
  return { logger: createLogger('test', level, sink), lines: () => raw.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

describe('the HTTP shell answers hostile input in the envelope', () => {
  const captured = capturingLogger();
  let server: Server;
  let port: number;
  const reached: string[] = [];

  beforeAll(async () => {
    const app = createHttpApp({ logger: captured.logger, health: new Health(), bodyLimitBytes: 1024 });
    app.get('/v1/models/*model_id', (req, res) => { reached.push(req.path); res.json({ ok: true }); });
    app.get('/v1/things/:thing_id', (req, res) => { reached.push(req.path); res.json({ ok: true }); });
    const jobs = Router();
    jobs.post('/v1/jobs/:job_id/cancel', (req, res) => { reached.push(req.path); res.json({ ok: true }); });
    app.use(jobs);
    app.post('/echo', (req, res) => { reached.push(req.path); res.json({ body: req.body }); });
    app.get('/boom', () => { throw new Error('a bug of ours'); });
    app.post('/unsupported', () => { throw new NotImplementedError('Unsupported: stored responses', 'store'); });
    app.post('/shed', () => { throw new OverloadedError('Too many bodies held', 1); });
    app.post('/invalid', () => { throw new InputError('temperature must be at most 2', 'temperature'); });
    // What an express-stack library raises for a client error it has no `type` for (http-errors shape).
    app.get('/library-refusal', () => { throw Object.assign(new Error('Range Not Satisfiable'), { status: 416, expose: true }); });
    app.get('/library-failure', () => { throw Object.assign(new Error('internal detail'), { status: 500, expose: false }); });
    finishHttpApp(app, captured.logger);
    server = await listen(app, 0, '127.0.0.1');
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => closeServer(server, 0));
  beforeEach(() => { reached.length = 0; });

  async function expectEnvelope(res: Response, status: number, fields: { code: string; param: string | null }) {
    expect(res.status).toBe(status);
    const traceId = res.headers.get('x-trace-id');
    expect(await res.json()).toEqual({
      code: String(status),
      error: { message: expect.any(String), type: 'invalid_request_error', ...fields, traceId },
      traceId,
    });
    expect(reached).toEqual([]);
  }

  it.each([
    ['GET', '/v1/models/%ZZ', 'model_id'],
    ['GET', '/v1/models/vendor/%E0%A4%A/x', 'model_id'],
    ['GET', '/v1/things/%', 'thing_id'],
    ['POST', '/v1/jobs/%ZZ/cancel', 'job_id'],
  ])('%s %s: a bad percent-escape is a 400 naming %s', async (method, path, param) => {
    await expectEnvelope(await fetch(`http://127.0.0.1:${port}${path}`, { method }), 400, { code: 'invalid_path_parameter', param });
  });

  it('another client refusal from the express stack keeps its 4xx; a server-side one stays a 500 without its detail', async () => {
    await expectEnvelope(await fetch(`http://127.0.0.1:${port}/library-refusal`), 416, { code: 'invalid_request', param: null });
    const failed = await fetch(`http://127.0.0.1:${port}/library-failure`);
    expect(failed.status).toBe(500);
    expect(JSON.stringify(await failed.json())).not.toContain('internal detail');
  });

  it('a well-escaped parameter still reaches its route', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/v1/things/a%20b`)).status).toBe(200);
    expect(reached).toEqual(['/v1/things/a%20b']);
  });

  it.each(['latin1', 'iso-8859-1', 'koi8-r', 'no-such-charset'])('content-type charset=%s is a 415 naming content-type', async (charset) => {
    const res = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', headers: { 'content-type': `application/json; charset=${charset}` }, body: '{"a":1}' });
    await expectEnvelope(res, 415, { code: 'unsupported_charset', param: 'content-type' });
  });

  it.each<[string, string]>([
    ['curl -d without a content-type (form-urlencoded)', 'content-type: application/x-www-form-urlencoded\r\n'],
    ['text/plain', 'content-type: text/plain\r\n'],
    ['no content-type at all', ''],
  ])('a JSON body sent as %s is a 415 naming content-type, not a missing body', async (_what, contentType) => {
    const before = reached.length;
    const res = await rawRequest(port, `POST /echo HTTP/1.1\r\nhost: x\r\n${contentType}content-length: 13\r\nconnection: close\r\n\r\n{"model":"m"}`);
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body).error).toMatchObject({ code: 'unsupported_media_type', param: 'content-type' });
    expect(reached.length).toBe(before);
  });

  it('a multipart body is left to its route, and a bodiless POST needs no content-type', async () => {
    const form = new FormData();
    form.set('purpose', 'batch');
    expect(await (await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', body: form })).json()).toEqual({});
    expect(await (await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST' })).json()).toEqual({});
  });

  const garbage = Buffer.from('this is not compressed at all');
  it.each([
    ['an unknown coding', 'x-foo', 415, 'unsupported_content_encoding', garbage],
    ['a coding the parser lacks', 'compress', 415, 'unsupported_content_encoding', garbage],
    ['stacked codings', 'gzip, gzip', 415, 'unsupported_content_encoding', gzipSync(gzipSync('{"a":1}'))],
    ['gzip of garbage', 'gzip', 400, 'invalid_content_encoding', garbage],
    ['deflate of garbage', 'deflate', 400, 'invalid_content_encoding', garbage],
    ['br of garbage', 'br', 400, 'invalid_content_encoding', garbage],
    ['truncated gzip', 'gzip', 400, 'invalid_content_encoding', gzipSync('{"a":1}').subarray(0, 12)],
  ])('%s (content-encoding: %s) answers %i %s', async (_what, encoding, status, code, body) => {
    const res = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
    await expectEnvelope(res, status, { code, param: 'content-encoding' });
  });

  it.each([['gzip', gzipSync('{"a":1}')], ['deflate', deflateSync('{"a":1}')]])('a well-formed %s body is accepted', async (encoding, body) => {
    const res = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
    expect(await res.json()).toEqual({ body: { a: 1 } });
  });

  it.each([
    ['oversized headers', 431, 'headers_too_large', null, `GET /echo HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['a URL past the head bound', 414, 'uri_too_long', null, `GET /echo/${'a'.repeat(20_000)} HTTP/1.1\r\nhost: x\r\n\r\n`],
    ['a URL past the head bound, ending no line', 414, 'uri_too_long', null, `POST /echo?q=${'a'.repeat(70_000)}`],
    ['a header whose value looks like a request line', 431, 'headers_too_large', null, `GET /echo HTTP/1.1\r\nhost: x\r\nx-big: GET /${'a'.repeat(20_000)}\r\n\r\n`],
    ['a malformed request line', 400, 'malformed_http_request', null, 'THIS IS NOT HTTP\r\n\r\n'],
    ['a header with no colon', 400, 'malformed_http_request', null, 'GET /echo HTTP/1.1\r\nhost: x\r\nnot a header\r\n\r\n'],
    ['a body shorter than its content-length', 400, 'malformed_http_request', null, 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n{"a"'],
    ['a chunked body cut off mid-stream', 400, 'malformed_http_request', null, 'POST /echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"a":\r\n'],
    ['an Expect other than 100-continue', 417, 'expectation_failed', 'expect', 'POST /echo HTTP/1.1\r\nhost: x\r\nexpect: 42-nonsense\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}'],
  ])('Node refusing %s answers %i %s in the envelope and closes', async (_what, status, code, param, bytes) => {
    const res = await rawRequest(port, bytes);
    expect(res.status).toBe(status);
    expect(res.headers.connection).toBe('close');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const traceId = res.headers['x-trace-id'];
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.parse(res.body)).toEqual({ code: String(status), error: { message: expect.any(String), type: 'invalid_request_error', param, code, traceId }, traceId });
    expect(reached).toEqual([]);
  });

  it('answers a parser error on a kept-alive connection after an earlier response', async () => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (c: Buffer) => { text += c.toString('utf8'); });
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /v1/things/first HTTP/1.1\r\nhost: x\r\n\r\n');
    for (let i = 0; i < 200 && !text.includes('{"ok":true}'); i++) await new Promise((r) => setTimeout(r, 10));
    socket.write(`GET /v1/things/second HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await closed;
    expect(text.startsWith('HTTP/1.1 200 OK')).toBe(true);
    const second = text.slice(text.indexOf('{"ok":true}') + '{"ok":true}'.length);
    expect(second).toMatch(/^HTTP\/1\.1 431 /);
    expect(second).toContain('"code":"headers_too_large"');
    expect(reached).toEqual(['/v1/things/first']);
  });

  it('logs client mistakes (400, 404, 415, 501) and requests shed under load (503 server_busy) at debug with their trace id, and a failure of ours as an error with its stack', async () => {
    const refused = await Promise.all([
      fetch(`http://127.0.0.1:${port}/v1/models/%ZZ`),
      fetch(`http://127.0.0.1:${port}/invalid`, { method: 'POST' }),
      fetch(`http://127.0.0.1:${port}/nowhere`),
      fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', headers: { 'content-type': 'application/json; charset=latin1' }, body: '{}' }),
      fetch(`http://127.0.0.1:${port}/unsupported`, { method: 'POST' }),
      fetch(`http://127.0.0.1:${port}/shed`, { method: 'POST' }),
    ]);
    expect(refused.map((r) => r.status)).toEqual([400, 400, 404, 415, 501, 503]);
    expect(refused[5].headers.get('retry-after')).toBe('1');
    const failed = await fetch(`http://127.0.0.1:${port}/boom`);
    expect(failed.status).toBe(500);
    const lines = captured.lines();
    for (const res of refused) {
      const own = lines.filter((l) => l.traceId === res.headers.get('x-trace-id'));
      expect(own).toEqual([expect.objectContaining({ level: 20, status: res.status, service: 'test' })]);
      expect(own[0]).not.toHaveProperty('err');
    }
    const failedLines = lines.filter((l) => l.traceId === failed.headers.get('x-trace-id'));
    expect(failedLines).toEqual([expect.objectContaining({ level: 50, msg: 'request failed', err: expect.objectContaining({ stack: expect.stringContaining('a bug of ours') }) })]);
  });
});

describe('the access log', () => {
  async function serve(accessLog: boolean) {
    const captured = capturingLogger('info');
    const app = createHttpApp({ logger: captured.logger, health: new Health(), bodyLimitBytes: 1024, accessLog });
    app.get('/v1/things/:thing_id', (_req, res) => { res.json({ ok: true }); });
    finishHttpApp(app, captured.logger);
    const server = await listen(app, 0, '127.0.0.1');
    return { captured, server, base: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
  }

  it('writes one line per request without the query string when on, and none for probes', async () => {
    const { captured, server, base } = await serve(true);
    try {
      const ok = await fetch(`${base}/v1/things/t1?api_key=sk-secret-in-query`);
      const missing = await fetch(`${base}/nowhere?token=sk-other-secret`);
      expect((await fetch(`${base}/livez`)).status).toBe(200);
      await closeServer(server, 1000);
      const access = captured.lines().filter((l) => l.msg === 'access');
      expect(access).toEqual([
        expect.objectContaining({ method: 'GET', path: '/v1/things/t1', status: 200, durationMs: expect.any(Number), traceId: ok.headers.get('x-trace-id') }),
        expect.objectContaining({ method: 'GET', path: '/nowhere', status: 404, traceId: missing.headers.get('x-trace-id') }),
      ]);
      expect(JSON.stringify(captured.lines())).not.toMatch(/sk-secret-in-query|sk-other-secret/);
    } finally {
      await closeServer(server, 0);
    }
  });

  it('is silent when off (the default)', async () => {
    const { captured, server, base } = await serve(false);
    try {
      expect((await fetch(`${base}/v1/things/t1`)).status).toBe(200);
      expect(captured.lines()).toEqual([]);
    } finally {
      await closeServer(server, 0);
    }
  });
});
