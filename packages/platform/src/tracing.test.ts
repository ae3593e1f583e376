import type { Server } from 'node:http';
import { Health } from './health';
import { closeServer, createHttpApp, finishHttpApp, listen } from './http';
import { H_TRACE_ID } from './identity';
import { createLogger } from './logger';
import { startTracing, traceIdOfTraceparent, tracingEnabled } from './tracing';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('traceIdOfTraceparent', () => {
  test.each([
    [`00-${TRACE}-00f067aa0ba902b7-01`, TRACE],
    [`00-${TRACE}-00f067aa0ba902b7-00`, TRACE],
    [`00-00000000000000000000000000000000-00f067aa0ba902b7-01`, null],
    [`00-${TRACE}-0000000000000000-01`, null],
    [`01-${TRACE}-00f067aa0ba902b7-01`, null],
    [`00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`, null],
    [`00-${TRACE}-00f067aa0ba902b7`, null],
    ['', null],
    [undefined, null],
  ])('%s -> %s', (header, expected) => {
    expect(traceIdOfTraceparent(header)).toBe(expected);
  });
});

describe('startTracing', () => {
  test('without an OTLP endpoint nothing is installed (the no-op tracer)', () => {
    expect(startTracing('test', {})).toBeNull();
    expect(startTracing('test', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracingEnabled()).toBe(false);
  });
});

describe('trace id of a request with tracing off', () => {
  const logger = createLogger('tracing-test', 'silent');
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => closeServer(s, 0))));

  async function app(exposure: 'public' | 'internal') {
    const a = createHttpApp({ logger, health: new Health(), bodyLimitBytes: null, exposure });
    a.get('/trace', (req, res) => { res.json({ traceId: req.traceId }); });
    finishHttpApp(a, logger);
    const server = await listen(a, 0, '127.0.0.1');
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as { port: number }).port}/trace`;
  }

  test("the public port takes a valid traceparent's trace id, and mints one otherwise", async () => {
    const url = await app('public');
    const given = await fetch(url, { headers: { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` } });
    expect(given.headers.get('x-trace-id')).toBe(TRACE);
    expect(await given.json()).toEqual({ traceId: TRACE });
    const bad = await fetch(url, { headers: { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` } });
    expect(bad.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(bad.headers.get('x-trace-id')).not.toBe('0'.repeat(32));
    // The edge's own header is never believed from a client.
    const forged = await fetch(url, { headers: { [H_TRACE_ID]: TRACE } });
    expect(forged.headers.get('x-trace-id')).not.toBe(TRACE);
  });
});
