import express from 'express';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@gw/platform';
import { forwardTo } from './forwarding';

const logger = createLogger('edge-cut-test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** What a service behind the edge sends before it dies (its socket is destroyed mid-response). */
type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': 'br-cut-test' };
const CHAT_EVENT = 'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hel"},"finish_reason":null}]}\n\n';
const RESPONSES_EVENT = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"hel"}\n\n';
const MESSAGES_EVENT = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hel"}}\n\n';

/** Writes `body`, then kills the connection once the bytes are out, the way a SIGKILLed process does. */
const writeThenDie = (headers: Record<string, string>, body: string): Behaviour => (_req, res) => {
  res.writeHead(200, headers);
  res.write(body, () => setTimeout(() => res.socket?.destroy(), 50));
};

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  /** The response ended normally; false when the connection was cut. */
  ended: boolean;
}

function post(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, ended: true }));
      res.on('error', () => resolve({ status: res.statusCode!, headers: res.headers, body, ended: false }));
    });
    req.on('error', reject);
    req.end('{"stream":true}');
  });
}

function listenOn(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

describe('edge: a response cut by the service behind it', () => {
  let behaviour: Behaviour;
  let service: Server;
  let edge: Server;
  let edgePort: number;

  beforeAll(async () => {
    service = createServer((req, res) => {
      req.resume();
      req.on('end', () => behaviour(req, res));
    });
    const servicePort = await listenOn(service);
    const app = express();
    const forward = forwardTo(`http://127.0.0.1:${servicePort}`, 1024, logger, 1_000);
    app.use((req, res) => {
      req.headers['x-gw-trace-id'] = 'trace-cut';
      forward(req, res, () => res.status(404).end());
    });
    edge = createServer(app);
    edgePort = await listenOn(edge);
  });

  afterAll(async () => {
    for (const s of [edge, service]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  it('ends a chat stream with a `data:` error envelope, then the end of the stream', async () => {
    behaviour = writeThenDie(SSE_HEADERS, CHAT_EVENT);
    const a = await post(edgePort, '/v1/chat/completions');
    expect(a).toMatchObject({ status: 200, ended: true });
    expect(a.headers['x-request-id']).toBe('br-cut-test');
    expect(a.body.startsWith(CHAT_EVENT)).toBe(true);
    const events = a.body.slice(CHAT_EVENT.length);
    expect(events).toMatch(/^data: .*\n\n$/);
    const envelope = JSON.parse(events.slice('data: '.length));
    expect(envelope).toMatchObject({ code: '503', error: { type: 'service_unavailable_error', code: 'upstream_stream_cut' } });
    expect(a.body).not.toContain('[DONE]');
  });

  it('ends a responses stream with `event: error`', async () => {
    behaviour = writeThenDie(SSE_HEADERS, RESPONSES_EVENT);
    const a = await post(edgePort, '/v1/responses');
    expect(a).toMatchObject({ status: 200, ended: true });
    const [, last] = a.body.split(RESPONSES_EVENT);
    expect(last).toMatch(/^event: error\ndata: .*\n\n$/);
    expect(JSON.parse(last.split('data: ')[1])).toMatchObject({ type: 'error', code: 'service_unavailable_error', param: null });
  });

  it('ends a messages stream with an Anthropic error event', async () => {
    behaviour = writeThenDie(SSE_HEADERS, MESSAGES_EVENT);
    const a = await post(edgePort, '/v1/messages');
    expect(a).toMatchObject({ status: 200, ended: true });
    const [, last] = a.body.split(MESSAGES_EVENT);
    expect(last).toMatch(/^event: error\ndata: .*\n\n$/);
    expect(JSON.parse(last.split('data: ')[1])).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });

  it('closes a half-sent event before the error event, so the error stays its own event', async () => {
    behaviour = writeThenDie(SSE_HEADERS, `${CHAT_EVENT}data: {"id":"c1","obj`);
    const a = await post(edgePort, '/v1/chat/completions');
    expect(a.ended).toBe(true);
    expect(a.body).toMatch(/data: \{"id":"c1","obj\n\ndata: \{"code":"503".*\n\n$/);
  });

  it('ends a stream whose service stays silent past the idle timeout', async () => {
    behaviour = (_req, res) => { res.writeHead(200, SSE_HEADERS); res.write(CHAT_EVENT); };
    const started = Date.now();
    const a = await post(edgePort, '/v1/chat/completions');
    expect(a.ended).toBe(true);
    expect(a.body).toMatch(/data: \{"code":"503".*\n\n$/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('answers 503 in the envelope when the service dies after its headers but before any byte', async () => {
    behaviour = (_req, res) => { res.writeHead(200, SSE_HEADERS); res.flushHeaders(); setTimeout(() => res.socket?.destroy(), 50); };
    const a = await post(edgePort, '/v1/chat/completions');
    expect(a).toMatchObject({ status: 503, ended: true });
    expect(a.headers['content-type']).toMatch(/application\/json/);
    expect(a.headers['x-request-id']).toBe('br-cut-test');
    expect(JSON.parse(a.body)).toMatchObject({ code: '503', error: { type: 'service_unavailable_error' } });
  });

  it('closes the connection of a JSON answer cut midway, instead of leaving the client waiting', async () => {
    behaviour = writeThenDie({ 'content-type': 'application/json', 'content-length': '100' }, '{"id":"partial",');
    const a = await post(edgePort, '/v1/chat/completions');
    expect(a.status).toBe(200);
    expect(a.ended).toBe(false);
    expect(a.body).toBe('{"id":"partial",');
  });
});
