import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { InputError, PaymentRequiredError, UnavailableError, UpstreamError, type GatewayError } from './errors';
import { encodeEvent, EventStreamWriter, streamErrorEvent, type EventStreamFormat } from './event-stream';

describe('encodeEvent', () => {
  it.each([
    ['an unnamed event', { data: '{"a":1}' }, 'data: {"a":1}\n\n'],
    ['a named event', { event: 'message_start', data: '{}' }, 'event: message_start\ndata: {}\n\n'],
    ['a multi-line payload, one data line per line', { data: 'a\nb\r\nc' }, 'data: a\ndata: b\ndata: c\n\n'],
    ['the chat terminator', { data: '[DONE]' }, 'data: [DONE]\n\n'],
  ])('%s', (_name, event, wire) => {
    expect(encodeEvent(event)).toBe(wire);
  });
});

describe('streamErrorEvent', () => {
  const cut = new UnavailableError('stopped', 'upstream_stream_cut');
  it.each<[string, EventStreamFormat, GatewayError, number | undefined, string | undefined, unknown]>([
    ['chat: the envelope on a data line', 'chat', cut, undefined, undefined,
      { code: '503', error: { message: 'stopped', type: 'service_unavailable_error', param: null, code: 'upstream_stream_cut', traceId: 't1' }, traceId: 't1' }],
    ['responses: event error, numbered after the events sent', 'responses', new UpstreamError('bad gateway'), 7, 'error',
      { type: 'error', code: 'upstream_error', message: 'bad gateway', param: null, sequence_number: 7 }],
    ['responses: unnumbered when the count is unknown (the edge)', 'responses', cut, undefined, 'error',
      { type: 'error', code: 'service_unavailable_error', message: 'stopped', param: null }],
    ['messages: a cut is an api_error', 'messages', cut, undefined, 'error', { type: 'error', error: { type: 'api_error', message: 'stopped' } }],
    ['messages: a 402 is a billing_error', 'messages', new PaymentRequiredError('no money'), 3, 'error', { type: 'error', error: { type: 'billing_error', message: 'no money' } }],
    ['messages: a 400 is an invalid_request_error', 'messages', new InputError('bad', 'x'), 0, 'error', { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } }],
  ])('%s', (_name, format, err, sent, eventName, payload) => {
    const wire = streamErrorEvent(format, err, 't1', sent);
    expect(wire.endsWith('\n\n')).toBe(true);
    expect(wire).not.toContain('[DONE]');
    const lines = wire.trimEnd().split('\n');
    expect(lines[0]).toBe(eventName === undefined ? lines[0] : `event: ${eventName}`);
    if (eventName === undefined) expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[lines.length - 1].slice('data: '.length))).toEqual(payload);
  });
});

describe('EventStreamWriter', () => {
  let server: Server;
  let port = 0;
  let serve: (writer: EventStreamWriter) => void;
  let heartbeatMs = 0;
  let lastWriter: EventStreamWriter | null = null;
  let lastResponse: ServerResponse | null = null;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      lastResponse = res;
      lastWriter = new EventStreamWriter(res, { format: 'chat', heartbeatMs, headers: { 'x-request-id': 'br-1' } });
      lastWriter.open();
      serve(lastWriter);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => { await new Promise((r) => server.close(r)); });

  const get = () => new Promise<IncomingMessage>((resolve, reject) => request({ port, host: '127.0.0.1', path: '/' }, resolve).on('error', reject).end());
  const readAll = async (res: IncomingMessage) => {
    let body = '';
    for await (const chunk of res) body += String(chunk);
    return body;
  };

  it('sends the stream headers before any event, then the events and the trailer', async () => {
    heartbeatMs = 0;
    let release!: () => void;
    serve = (w) => { void new Promise<void>((r) => { release = r; }).then(() => { w.event({ data: 'one' }); w.end({ data: '[DONE]' }); }); };
    const res = await get();
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-request-id': 'br-1' });
    release();
    expect(await readAll(res)).toBe('data: one\n\ndata: [DONE]\n\n');
  });

  it('sends the headers and an event written in the same turn in one socket write', async () => {
    heartbeatMs = 0;
    const batches: string[] = [];
    serve = (w) => {
      // Each call of a socket's _write or _writev is one write to the connection.
      const socket = lastResponse!.socket as Socket & Record<'_write' | '_writev', (...args: never[]) => void>;
      const write = socket._write.bind(socket);
      const writev = socket._writev.bind(socket);
      socket._write = ((chunk: Buffer | string, ...rest: never[]) => { batches.push(String(chunk)); write(chunk as never, ...rest); }) as never;
      socket._writev = ((chunks: { chunk: Buffer | string }[], cb: never) => { batches.push(chunks.map((c) => String(c.chunk)).join('')); writev(chunks as never, cb); }) as never;
      w.event({ data: 'one' });
      setTimeout(() => w.end({ data: '[DONE]' }), 20);
    };
    expect(await readAll(await get())).toBe('data: one\n\ndata: [DONE]\n\n');
    expect(batches[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n[0-9a-f]+\r\ndata: one\n\n\r\n$/);
  });

  it('writes a ping comment while the stream is idle', async () => {
    heartbeatMs = 20;
    serve = (w) => { setTimeout(() => w.end(), 200); };
    const body = await readAll(await get());
    expect(body).toMatch(/^(: ping\n\n)+$/);
  });

  it('ends a failed stream with the format error event only', async () => {
    heartbeatMs = 0;
    serve = (w) => { w.event({ data: '{}' }); w.fail(new UpstreamError('lost'), 'tr'); };
    const body = await readAll(await get());
    expect(body).toBe(`data: {}\n\n${streamErrorEvent('chat', new UpstreamError('lost'), 'tr')}`);
  });

  it('learns that the client left, and drops what is written after', async () => {
    heartbeatMs = 10;
    serve = () => undefined;
    const res = await get();
    res.destroy();
    const writer = lastWriter!;
    await waitUntil(() => writer.clientGone);
    writer.event({ data: 'late' });
    writer.end();
    expect(writer.eventsSent).toBe(0);
  });
});

async function waitUntil(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 10));
  }
}
