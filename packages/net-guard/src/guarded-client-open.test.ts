import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { OutboundUrlError, type HostResolver } from './check-url';
import { GuardedHttpClient, OutboundRequestError } from './guarded-client';
import { selfSignedCert, startTlsReceiver, type TlsReceiver } from './testing/tls-receiver';

/** A name no system resolver knows: only the injected resolver (and the pinned lookup) can make it reachable. */
const HOST = 'videos.rebind.test';

async function bytesOf(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of body) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

describe('GuardedHttpClient.open (a large body, streamed)', () => {
  let receiver: TlsReceiver;
  let lookups: string[];
  /** Answers loopback for the first lookup of HOST, then an internal address: a rebinding zone. */
  let resolver: HostResolver;
  let client: GuardedHttpClient;
  const open = (path: string, maxBytes = 1024) => client.open(`https://${HOST}:${receiver.port}${path}`, { timeoutMs: 5000, param: 'video_url', maxBytes });

  beforeAll(async () => {
    receiver = await startTlsReceiver(await selfSignedCert([HOST, 'localhost']));
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.received.length = 0;
    lookups = [];
    resolver = async (name) => {
      lookups.push(name);
      return [{ address: lookups.length === 1 ? '127.0.0.1' : '10.0.0.9', family: 4 }];
    };
    // Loopback allowed (test-only) so the receiver on this machine is reachable at all.
    client = new GuardedHttpClient({ allowLoopback: true, resolver: (n) => resolver(n), extraCa: [receiver.cert] });
  });

  it('hands the body over as it arrives, from the address it checked (a later DNS answer is never used)', async () => {
    let finish: () => void = () => undefined;
    receiver.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.write(Buffer.from('first part;'));
      finish = () => res.end(Buffer.from('second part'));
    });
    const opened = await open('/v.mp4');
    expect(opened).toMatchObject({ status: 200, url: `https://${HOST}:${receiver.port}/v.mp4`, contentType: 'video/mp4' });
    // The first part is readable while the server still holds the rest back: nothing is buffered whole.
    const [first] = await once(opened.body, 'data') as [Buffer];
    expect(first.toString()).toBe('first part;');
    opened.body.pause();
    finish();
    expect((await bytesOf(opened.body)).toString()).toBe('second part');
    expect(lookups).toEqual([HOST]);
  });

  it('refuses a redirect to an internal address before following it', async () => {
    receiver.answer((_req, res) => { res.writeHead(302, { location: 'https://10.0.0.1/x.mp4' }).end(); });
    const err = await open('/moved').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundUrlError);
    expect(err).toMatchObject({ param: 'video_url', code: 'forbidden_address' });
  });

  it('re-checks a redirect to a name: a hop that now resolves internal is refused', async () => {
    receiver.answer((req, res) => {
      if (req.path === '/a') res.writeHead(307, { location: '/b' }).end();
      else res.writeHead(200).end('never served');
    });
    await expect(open('/a')).rejects.toMatchObject({ code: 'forbidden_address' });
    expect(receiver.received.map((r) => r.path)).toEqual(['/a']);
  });

  it('a body past the limit: refused up front when declared, the stream errors once it is passed when not', async () => {
    resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    receiver.answer((_req, res) => { res.writeHead(200, { 'content-length': '4096' }).end(Buffer.alloc(4096)); });
    await expect(open('/declared')).rejects.toMatchObject({ kind: 'too_large' });
    receiver.answer((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 8; i++) res.write(Buffer.alloc(512));
      res.end();
    });
    const opened = await open('/chunked');
    const err = await bytesOf(opened.body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRequestError);
    expect(err).toMatchObject({ kind: 'too_large' });
  });

  it('only https: a plain-http URL, or a redirect to one, is refused', async () => {
    await expect(client.open(`http://${HOST}:${receiver.port}/v.mp4`, { timeoutMs: 5000, param: 'video_url', maxBytes: 1024 }))
      .rejects.toMatchObject({ param: 'video_url', code: 'invalid_url' });
    resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    receiver.answer((_req, res) => { res.writeHead(302, { location: `http://${HOST}:${receiver.port}/plain` }).end(); });
    await expect(open('/to-http')).rejects.toMatchObject({ code: 'invalid_url' });
    expect(receiver.received.map((r) => r.path)).toEqual(['/to-http']);
  });
});
