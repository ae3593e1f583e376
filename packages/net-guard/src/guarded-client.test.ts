import { OutboundUrlError, type HostResolver } from './check-url';
import { GuardedHttpClient, OutboundRequestError } from './guarded-client';
import { selfSignedCert, startTlsReceiver, type TlsReceiver } from './testing/tls-receiver';

/** A name no system resolver knows: only the injected resolver (and the pinned lookup) can make it reachable. */
const HOOK_HOST = 'hooks.rebind.test';

describe('GuardedHttpClient', () => {
  let receiver: TlsReceiver;
  let lookups: string[];
  /** Answers loopback for the first lookup of HOOK_HOST, then an internal address: a rebinding zone. */
  let resolver: HostResolver;
  let client: GuardedHttpClient;
  const post = (path: string, timeoutMs = 5000) => client.send(`https://${HOOK_HOST}:${receiver.port}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}', timeoutMs, param: 'callback_url',
  });

  beforeAll(async () => {
    receiver = await startTlsReceiver(await selfSignedCert([HOOK_HOST, 'localhost']));
  });
  afterAll(() => receiver.close());
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer((_req, res) => { res.writeHead(200).end(); });
    lookups = [];
    resolver = async (name) => {
      lookups.push(name);
      return [{ address: lookups.length === 1 ? '127.0.0.1' : '10.0.0.9', family: 4 }];
    };
    // Loopback allowed (test-only) so the receiver on this machine is reachable at all.
    client = new GuardedHttpClient({ allowLoopback: true, resolver: (n) => resolver(n), extraCa: [receiver.cert] });
  });

  it('connects to the address it checked: a DNS answer that changes after the check is never used', async () => {
    const res = await post('/hook');
    expect(res).toEqual({ status: 200, url: `https://${HOOK_HOST}:${receiver.port}/hook`, redirects: 0 });
    expect(lookups).toEqual([HOOK_HOST]);
    expect(receiver.received).toMatchObject([{ method: 'POST', path: '/hook', body: '{"a":1}' }]);
  });

  it('refuses a redirect to an internal address, checking the hop before connecting', async () => {
    receiver.answer((_req, res) => { res.writeHead(307, { location: 'https://169.254.169.254/latest/meta-data' }).end(); });
    const err = await post('/hook').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundUrlError);
    expect(err).toMatchObject({ status: 400, param: 'callback_url', code: 'forbidden_address' });
    expect(receiver.received).toHaveLength(1);
  });

  it('re-resolves and re-checks a redirect to a name: a hop that now resolves internal is refused', async () => {
    receiver.answer((req, res) => {
      if (req.path === '/hook') res.writeHead(302, { location: `https://${HOOK_HOST}:${receiver.port}/next` }).end();
      else res.writeHead(200).end();
    });
    await expect(post('/hook')).rejects.toMatchObject({ code: 'forbidden_address', message: expect.stringContaining('private') });
    expect(lookups).toEqual([HOOK_HOST, HOOK_HOST]);
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
  });

  it('follows redirects to a 2xx: 307 keeps the POST and its body, 302 continues as a GET', async () => {
    resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    receiver.answer((req, res) => {
      if (req.path === '/a') res.writeHead(307, { location: '/b' }).end();
      else if (req.path === '/b') res.writeHead(302, { location: '/c' }).end();
      else res.writeHead(204).end();
    });
    const res = await post('/a');
    expect(res).toMatchObject({ status: 204, redirects: 2, url: `https://${HOOK_HOST}:${receiver.port}/c` });
    expect(receiver.received.map((r) => [r.method, r.path, r.body])).toEqual([['POST', '/a', '{"a":1}'], ['POST', '/b', '{"a":1}'], ['GET', '/c', '']]);
  });

  it('stops after 5 redirects', async () => {
    resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    receiver.answer((_req, res) => { res.writeHead(307, { location: '/again' }).end(); });
    await expect(post('/loop')).rejects.toMatchObject({ kind: 'too_many_redirects' });
    expect(receiver.received).toHaveLength(6);
  });

  it('ends a request that gets no answer within its time limit', async () => {
    resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    receiver.answer(() => { /* never answers */ });
    const started = Date.now();
    const err = await post('/slow', 300).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRequestError);
    expect(err).toMatchObject({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('refuses a certificate nobody trusts (no extra CA given)', async () => {
    const strict = new GuardedHttpClient({ allowLoopback: true, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const err = await strict.send(`https://${HOOK_HOST}:${receiver.port}/hook`, { method: 'POST', headers: {}, body: '{}', timeoutMs: 5000, param: 'url' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'connection', message: expect.stringMatching(/certificate/i) });
    expect(receiver.received).toHaveLength(0);
  });

  it('without the loopback switch, the receiver on this machine is never reached', async () => {
    const guarded = new GuardedHttpClient({ resolver: async () => [{ address: '127.0.0.1', family: 4 }], extraCa: [receiver.cert] });
    await expect(guarded.send(`https://localhost:${receiver.port}/hook`, { method: 'POST', headers: {}, body: '{}', timeoutMs: 5000, param: 'url' }))
      .rejects.toMatchObject({ status: 400, param: 'url', code: 'forbidden_address' });
    expect(receiver.received).toHaveLength(0);
  });
});

describe('GuardedHttpClient.fetch (media a caller points at)', () => {
  let receiver: TlsReceiver;
  let client: GuardedHttpClient;
  const get = (path: string, maxBytes = 1024) => client.fetch(`${receiver.origin}${path}`, { timeoutMs: 5000, param: 'file_url', maxBytes });

  beforeAll(async () => {
    receiver = await startTlsReceiver();
    // Loopback allowed (test-only) so the server on this machine is reachable at all.
    client = new GuardedHttpClient({ allowLoopback: true, extraCa: [receiver.cert] });
  });
  afterAll(() => receiver.close());

  it('reads the body and its type, following an allowed redirect', async () => {
    receiver.answer((req, res) => {
      if (req.path === '/moved') return void res.writeHead(302, { location: '/audio.wav' }).end();
      res.writeHead(200, { 'content-type': 'audio/wav' }).end(Buffer.from('RIFF....WAVE'));
    });
    expect(await get('/moved')).toEqual({ status: 200, url: `${receiver.origin}/audio.wav`, contentType: 'audio/wav', body: Buffer.from('RIFF....WAVE') });
  });

  it('a body over the limit is refused, whether declared or streamed without a length', async () => {
    receiver.answer((_req, res) => { res.writeHead(200, { 'content-length': '4096' }).end(Buffer.alloc(4096)); });
    await expect(get('/declared')).rejects.toMatchObject({ kind: 'too_large' });
    receiver.answer((_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 8; i++) res.write(Buffer.alloc(512));
      res.end();
    });
    await expect(get('/chunked')).rejects.toMatchObject({ kind: 'too_large' });
  });

  it('a redirect to an internal address is refused before it is followed', async () => {
    receiver.answer((_req, res) => { res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data' }).end(); });
    await expect(get('/to-metadata')).rejects.toMatchObject({ status: 400, param: 'file_url', code: 'forbidden_address' });
  });
});
