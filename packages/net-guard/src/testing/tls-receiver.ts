import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';

/** A self-signed certificate for `names` (default `localhost`) and 127.0.0.1, for HTTPS receivers in tests. */
export async function selfSignedCert(names: string[] = ['localhost']): Promise<{ cert: string; key: string }> {
  const pems = await generate([{ name: 'commonName', value: names[0] }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notAfterDate: new Date(Date.now() + 24 * 3600_000),
    extensions: [{ name: 'subjectAltName', altNames: [...names.map((value) => ({ type: 2 as const, value })), { type: 7, ip: '127.0.0.1' }] }],
  });
  return { cert: pems.cert, key: pems.private };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  atMs: number;
}

export type ReceiverHandler = (req: ReceivedRequest, res: ServerResponse) => void;

export interface TlsReceiver {
  /** `https://localhost:<port>` */
  origin: string;
  port: number;
  cert: string;
  received: ReceivedRequest[];
  /** Replaces how the receiver answers (default: 200). */
  answer(handler: ReceiverHandler): void;
  close(): Promise<void>;
}

/** An HTTPS server on loopback that records every request (method, path, headers, exact body bytes). */
export async function startTlsReceiver(pems?: { cert: string; key: string }): Promise<TlsReceiver> {
  const { cert, key } = pems ?? await selfSignedCert();
  const received: ReceivedRequest[] = [];
  let handler: ReceiverHandler = (_req, res) => { res.writeHead(200).end('ok'); };
  const server: Server = createServer({ cert, key }, (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), atMs: Date.now() };
      received.push(entry);
      handler(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://localhost:${port}`,
    port,
    cert,
    received,
    answer: (h) => { handler = h; },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
