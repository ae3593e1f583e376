import type { Server } from 'node:http';
import { Health } from './health';
import { closeServer, createHttpApp, finishHttpApp, listen, requireIdentity } from './http';
import type { Identity } from './identity';
import { IDENTITY_HEADER, IdentitySigner, IdentityVerifier } from './identity-token';
import { createLogger } from './logger';
import { Metrics } from './metrics';

const SECRET = 'http-identity-test-secret-0123456789abcdef';
const ID: Identity = { accountId: 'acct_1', keyHash: 'ab'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
const edge = new IdentitySigner(SECRET, 'edge');

describe('createHttpApp with an identity verifier', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const logger = createLogger('http-identity-test', 'silent');
    const app = createHttpApp({ logger, health: new Health(), metrics: new Metrics('http-identity-test', false), bodyLimitBytes: 1024, identity: new IdentityVerifier(SECRET) });
    app.get('/v1/me', (req, res) => { res.json({ identity: requireIdentity(req), traceId: req.traceId }); });
    app.get('/v1/public', (req, res) => { res.json({ identity: req.identity }); });
    app.post('/v1/echo', (req, res) => { res.json(req.body); });
    finishHttpApp(app, logger);
    server = await listen(app, 0);
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(() => closeServer(server, 100));

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers });

  it('hands the route the verified identity and trace id of the token', async () => {
    const res = await get('/v1/me?x=1', { [IDENTITY_HEADER]: edge.mint({ method: 'GET', path: '/v1/me?x=1' }, ID, 'trace-from-edge') });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-trace-id')).toBe('trace-from-edge');
    expect(await res.json()).toEqual({ identity: ID, traceId: 'trace-from-edge' });
  });

  it('an anonymous token reaches a route with no identity, and a keyed route refuses it', async () => {
    const pub = await get('/v1/public', { [IDENTITY_HEADER]: edge.mint({ method: 'GET', path: '/v1/public' }, null, 't') });
    expect(await pub.json()).toEqual({ identity: null });
    expect((await get('/v1/me', { [IDENTITY_HEADER]: edge.mint({ method: 'GET', path: '/v1/me' }, null, 't') })).status).toBe(401);
  });

  it.each<[string, Record<string, string>]>([
    ['nothing', {}],
    ['the plain identity headers', { 'x-gw-account-id': ID.accountId, 'x-gw-key-hash': ID.keyHash, 'x-gw-key-management': 'true' }],
    ['a token for another path', { [IDENTITY_HEADER]: edge.mint({ method: 'GET', path: '/v1/public' }, ID, 't') }],
    ['a token signed with another secret', { [IDENTITY_HEADER]: new IdentitySigner('not-the-platform-secret-0123456789abcdef', 'edge').mint({ method: 'GET', path: '/v1/me' }, ID, 't') }],
  ])('%s: 401 in the envelope, on known and unknown routes alike', async (_what, headers) => {
    for (const path of ['/v1/me', '/v1/nowhere']) {
      const res = await get(path, headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: '401', error: { type: 'authentication_error' } });
    }
  });

  it('refuses a request body before parsing it when the identity is missing', async () => {
    const res = await fetch(`${base}/v1/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    expect(res.status).toBe(401);
  });

  it('leaves the probes and /metrics open (they carry no account data)', async () => {
    for (const path of ['/livez', '/readyz', '/metrics']) expect((await get(path)).status).toBe(200);
  });
});
