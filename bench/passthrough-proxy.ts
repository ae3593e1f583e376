/**
 * The floor of the benchmark: the least a JSON gateway in Node does per chat call, and nothing more. It reads
 * the request, parses it, swaps the public model name for the provider's, adds the provider's credential and
 * forwards it over a keep-alive pool; a unary answer is parsed (a gateway must read its usage) and written
 * again, a stream's bytes are passed on as they arrive. No keys, accounts, limits, billing or archive.
 *
 *   node --import tsx bench/passthrough-proxy.ts --port 18080 --upstream http://127.0.0.1:18081 --model echo-chat --key sim-key
 *
 * Measured beside the gateway in the same run, it says how much of the gateway's cost on this machine is the
 * HTTP round trip itself, which no gateway can avoid.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    upstream: { type: 'string' },
    model: { type: 'string' },
    key: { type: 'string' },
  },
});
if (!values.port || !values.upstream || !values.model || !values.key) {
  process.stderr.write('usage: passthrough-proxy.ts --port N --upstream URL --model PROVIDER_MODEL --key UPSTREAM_KEY\n');
  process.exit(2);
}
const upstreamModel = values.model;
const upstreamAuth = `Bearer ${values.key}`;
const pool = new Pool(values.upstream, { connections: 256 });
const MAX_BODY_BYTES = 1 << 20;

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function forward(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
  let parsed: { model?: unknown; stream?: unknown };
  try {
    parsed = JSON.parse(raw.toString('utf8')) as typeof parsed;
  } catch {
    answer(res, 400, '{"error":{"message":"body is not JSON"}}');
    return;
  }
  parsed.model = upstreamModel;
  const upstream = await pool.request({
    path: req.url ?? '/v1/chat/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: upstreamAuth },
    body: JSON.stringify(parsed),
  });
  if (parsed.stream === true) {
    res.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'text/event-stream'), 'cache-control': 'no-cache' });
    for await (const chunk of upstream.body) res.write(chunk);
    res.end();
    return;
  }
  answer(res, upstream.statusCode, JSON.stringify(await upstream.body.json()));
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    forward(req, res, Buffer.concat(chunks)).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else answer(res, 502, JSON.stringify({ error: { message: String((err as Error)?.message ?? err) } }));
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(values.port), values.host);

const stop = () => {
  server.close();
  server.closeAllConnections();
  void pool.close().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
