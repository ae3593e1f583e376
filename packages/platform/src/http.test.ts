import type { Server } from 'node:http';
import { request } from 'node:http';
import { connect } from 'node:net';
import { InputError } from './errors';
import { Health } from './health';
import { closeServer, createHttpApp, finishHttpApp, listen } from './http';
import { createLogger } from './logger';
import { Metrics } from './metrics';

const logger = createLogger('http-test', 'silent');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (res: Response) => res.json() as Promise<any>;
const LIMIT = 1024;

describe('createHttpApp + finishHttpApp', () => {
  let server: Server;
  let base: string;
  let storeUp = true;
  let health: Health;

  beforeAll(async () => {
    health = new Health().addCheck('store', async () => storeUp).addCheck('bus', async () => true);
    const app = createHttpApp({ logger, health, metrics: new Metrics('http-test', false), bodyLimitBytes: LIMIT });
    app.post('/echo', (req, res) => { res.json({ body: req.body, traceId: req.traceId }); });
    app.post('/validate', async (req) => {
      throw new InputError('messages[1].content must be a string', 'messages[1].content');
    });
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => closeServer(server, 0));

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  async function expectEnvelope(res: Response, status: number, fields: { type: string; code: string; param: string | null }) {
    expect(res.status).toBe(status);
    const traceId = res.headers.get('x-trace-id');
    const body = await json(res);
    expect(body).toEqual({ code: String(status), error: { message: expect.any(String), ...fields, traceId }, traceId });
    return body;
  }

  it('an unknown route is a 404 envelope', async () => {
    const res = await fetch(`${base}/v1/nothing-here`);
    const body = await expectEnvelope(res, 404, { type: 'not_found_error', code: 'route_not_found', param: null });
    expect(body.error.message).toContain('/v1/nothing-here');
  });

  it('a known path with the wrong method is a 404 envelope too', async () => {
    await expectEnvelope(await fetch(`${base}/echo`), 404, { type: 'not_found_error', code: 'route_not_found', param: null });
  });

  it('malformed JSON is a 400, not a 500', async () => {
    await expectEnvelope(await post('/echo', '{"model": "x",'), 400, { type: 'invalid_request_error', code: 'invalid_json', param: null });
  });

  it('a body over the limit is a 413', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(LIMIT) });
    await expectEnvelope(await post('/echo', big), 413, { type: 'invalid_request_error', code: 'payload_too_large', param: null });
  });

  it('a chunked body (no Content-Length) over the limit is a 413', async () => {
    const port = (server.address() as { port: number }).port;
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/echo', method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.write('{"text":"');
      req.write('y'.repeat(LIMIT));
      req.end('"}');
    });
    expect(status).toBe(413);
    expect(JSON.parse(body).error.code).toBe('payload_too_large');
  });

  it('a body within the limit arrives parsed', async () => {
    const res = await post('/echo', JSON.stringify({ a: [1, 'two'] }));
    expect(res.status).toBe(200);
    expect((await json(res)).body).toEqual({ a: [1, 'two'] });
  });

  it('a thrown InputError keeps its param', async () => {
    await expectEnvelope(await post('/validate', '{}'), 400, { type: 'invalid_request_error', code: 'invalid_request', param: 'messages[1].content' });
  });

  it('uses the trace id the edge assigned, and makes one otherwise', async () => {
    const edgeTrace = 'f'.repeat(32);
    const withTrace = await post('/echo', '{}', { 'x-gw-trace-id': edgeTrace });
    expect(withTrace.headers.get('x-trace-id')).toBe(edgeTrace);
    expect((await json(withTrace)).traceId).toBe(edgeTrace);
    const without = await post('/echo', '{}');
    expect(without.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    const failed = await fetch(`${base}/nope`, { headers: { 'x-gw-trace-id': edgeTrace } });
    expect((await json(failed)).traceId).toBe(edgeTrace);
  });

  it('/livez answers while /readyz tells the truth about every check', async () => {
    expect((await fetch(`${base}/livez`)).status).toBe(200);

    let res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ ready: true, checks: { store: true, bus: true }, degraded: [] });

    storeUp = false;
    try {
      res = await fetch(`${base}/readyz`);
      expect(res.status).toBe(503);
      expect(await json(res)).toEqual({ ready: false, checks: { store: false, bus: true }, degraded: [] });
      expect((await fetch(`${base}/livez`)).status).toBe(200);
    } finally {
      storeUp = true;
    }
  });

  it('/readyz is 503 while draining, with every check passing', async () => {
    const draining = new Health().addCheck('store', async () => true);
    const app = createHttpApp({ logger, health: draining, bodyLimitBytes: LIMIT });
    finishHttpApp(app, logger);
    const s = await listen(app, 0, '127.0.0.1');
    try {
      const url = `http://127.0.0.1:${(s.address() as { port: number }).port}/readyz`;
      expect((await fetch(url)).status).toBe(200);
      draining.startDraining();
      const res = await fetch(url);
      expect(res.status).toBe(503);
      expect(await json(res)).toEqual({ ready: false, checks: { store: true }, degraded: [] });
    } finally {
      await closeServer(s, 0);
    }
  });

  it('serves Prometheus metrics', async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('gw_http_requests_total');
  });
});

describe('closeServer', () => {
  it('finishes the request in flight, and refuses one that arrives on its kept-alive connection with a 503 envelope and Connection: close', async () => {
    let entered!: () => void;
    const inFlight = new Promise<void>((resolve) => { entered = resolve; });
    const app = createHttpApp({ logger, health: new Health(), bodyLimitBytes: LIMIT });
    app.get('/slow', (_req, res) => { entered(); setTimeout(() => res.json({ done: true }), 300); });
    finishHttpApp(app, logger);
    const s = await listen(app, 0, '127.0.0.1');
    const socket = connect((s.address() as { port: number }).port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1'); });
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inFlight;
    const started = Date.now();
    const closing = closeServer(s, 10_000);
    // The client reuses its connection, as a keep-alive client does, while the server drains.
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await Promise.all([closing, ended]);
    // The drain ended with the connection, well inside the grace.
    expect(Date.now() - started).toBeLessThan(5_000);
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/);
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toContain('{"done":true}');
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second.toLowerCase()).toContain('connection: close');
    const body = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ code: '503', error: { type: 'service_unavailable_error', code: 'shutting_down', param: null } });
  });
});
