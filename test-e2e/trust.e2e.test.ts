import * as grpc from '@grpc/grpc-js';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { grpcClientOptions, IDENTITY_HEADER, IdentitySigner, type Identity } from '@gw/platform';
import { billingProto, type BillingServiceClient } from '@gw/proto';
import { api, spendableMicros, waitForBilledRequest, type ApiResponse } from './harness/api';
import { E2E_MODEL } from './harness/catalog';
import { useStack, type StackMode, type TestStack } from './harness/stack';

const modes: StackMode[] = ['processes', 'embedded'];
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const CHAT_BODY = { model: E2E_MODEL, messages: [{ role: 'user', content: 'spend someone else\'s money' }] };

/** One route of each internal HTTP port, called the way the edge forwards it. */
interface Target {
  name: string;
  url: (s: TestStack) => string;
  method: string;
  path: string;
  body?: unknown;
  /** The keys endpoints answer plain JSON errors; the others the spec's envelope. */
  plainErrors?: boolean;
}

const TARGETS: Target[] = [
  { name: 'inference chat', url: (s) => s.internal.inferenceURL, method: 'POST', path: '/v1/chat/completions', body: CHAT_BODY },
  { name: 'inference async chat', url: (s) => s.internal.inferenceURL, method: 'POST', path: '/v1/async/chat/completions', body: CHAT_BODY },
  { name: 'inference models (anonymous at the edge)', url: (s) => s.internal.inferenceURL, method: 'GET', path: '/v1/models' },
  { name: 'keys list', url: (s) => s.internal.keysURL, method: 'GET', path: '/v1/keys', plainErrors: true },
  { name: 'keys create', url: (s) => s.internal.keysURL, method: 'POST', path: '/v1/keys', body: { name: 'planted' }, plainErrors: true },
  { name: 'billing balance', url: (s) => s.internal.billingURL, method: 'GET', path: '/v1/billing/balance' },
  { name: 'webhooks settings', url: (s) => s.internal.webhooksURL, method: 'PUT', path: '/v1/webhooks/settings', body: { url: 'https://example.com/hook', rotate_secret: true } },
  { name: 'batch files', url: (s) => s.internal.batchURL, method: 'GET', path: '/v1/files' },
  { name: 'batch create', url: (s) => s.internal.batchURL, method: 'POST', path: '/v1/batches', body: { input_file_id: 'file-x', endpoint: '/v1/chat/completions', completion_window: '24h' } },
];

/** Each way of claiming an identity without the edge; each must be refused. */
type Forgery = (s: TestStack, t: Target, victim: Identity) => Record<string, string>;
const FORGERIES: Array<[string, Forgery]> = [
  ['header-only identity', (_s, _t, v) => ({ 'x-gw-account-id': v.accountId, 'x-gw-key-hash': v.keyHash, 'x-gw-key-management': 'true' })],
  ['forged token (garbage)', () => ({ [IDENTITY_HEADER]: `v1.${Buffer.from('{"identity":null}').toString('base64url')}.${randomBytes(32).toString('base64url')}` })],
  ['forged token (genuine one with the account changed)', (s, t, v) => {
    const [version, payload, mac] = new IdentitySigner(s.identitySecret, 'edge').mint({ method: t.method, path: t.path }, { ...v, accountId: 'acct_other' }, 't').split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { identity: Identity };
    claims.identity.accountId = v.accountId;
    return { [IDENTITY_HEADER]: `${version}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${mac}` };
  }],
  ['wrong-secret token', (_s, t, v) => ({ [IDENTITY_HEADER]: new IdentitySigner(randomBytes(32).toString('hex'), 'edge').mint({ method: t.method, path: t.path }, v, 't') })],
  ['expired token', (s, t, v) => ({ [IDENTITY_HEADER]: new IdentitySigner(s.identitySecret, 'edge', () => Date.now() - 60_000).mint({ method: t.method, path: t.path }, v, 't') })],
  ['mis-bound token (another path)', (s, t, v) => ({ [IDENTITY_HEADER]: new IdentitySigner(s.identitySecret, 'edge').mint({ method: t.method, path: `${t.path}?other=1` }, v, 't') })],
  ['mis-bound token (another method)', (s, t, v) => ({ [IDENTITY_HEADER]: new IdentitySigner(s.identitySecret, 'edge').mint({ method: t.method === 'GET' ? 'POST' : 'GET', path: t.path }, v, 't') })],
];

function expect401(res: ApiResponse, t: Target) {
  expect(res.status).toBe(401);
  if (t.plainErrors) expect(res.body).toEqual({ error: { code: 401, message: expect.any(String), param: null } });
  else expect(res.body).toMatchObject({ code: '401', error: { type: 'authentication_error', code: expect.stringMatching(/^identity_/) } });
}

/** Listening TCP sockets of this machine on `port` as local addresses (hex, from /proc/net/tcp{,6}). */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) => readFileSync(file, 'utf8').trim().split('\n').slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A' && cols[1].endsWith(`:${hexPort}`))
    .map((cols) => cols[1].split(':')[0]));
}
const LOOPBACK_V4 = '0100007F';
const ANY_V4 = '00000000';

/** A raw unary call with exactly the metadata given: the gRPC status code, OK included. */
function grpcStatus(client: BillingServiceClient, method: 'Preauthorize' | 'GetBalance' | 'GetKeyUsage', req: object, md: grpc.Metadata): Promise<grpc.status> {
  return new Promise((resolve) => {
    const fn = client[method] as unknown as (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void) => void;
    fn.call(client, req, md, { deadline: Date.now() + 10_000 }, (err) => resolve(err ? err.code : grpc.status.OK));
  });
}
const metadata = (entries: Record<string, string>) => {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(entries)) md.set(k, v);
  return md;
};

describe.each(modes)('no service trusts an identity it cannot verify (%s)', (mode) => {
  const stack = useStack(mode);
  let victim: Identity;
  let billing: BillingServiceClient;

  beforeAll(() => {
    victim = { accountId: stack.accountId, keyHash: sha256(stack.key), isManagement: true, keyLimitMicros: null, keyLimitReset: null };
    billing = new billingProto.gateway.billing.v1.BillingService(stack.internal.billingGrpc, grpc.credentials.createInsecure(), grpcClientOptions) as BillingServiceClient;
  });
  afterAll(() => billing?.close());

  test('through the edge the same calls succeed, and the billing record names the key hash', async () => {
    const chat = await api(stack.baseURL, 'POST', '/chat/completions', { key: stack.key, body: CHAT_BODY });
    expect(chat.status).toBe(200);
    const record = await waitForBilledRequest(stack.baseURL, stack.key, chat.headers.get('x-request-id')!);
    expect(record.key_hash).toBe(victim.keyHash);
    expect((await api(stack.baseURL, 'GET', '/models')).status).toBe(200);
    expect((await api(stack.baseURL, 'GET', '/keys', { key: stack.key })).status).toBe(200);
    expect((await api(stack.baseURL, 'GET', '/billing/balance', { key: stack.key })).status).toBe(200);
  });

  test('every forged, expired, wrong-secret, mis-bound or header-only identity sent straight to an internal HTTP port gets 401, and spends nothing', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const keysBefore = (await api(stack.baseURL, 'GET', '/keys', { key: stack.key })).body.data.length;
    for (const t of TARGETS) {
      for (const [, forge] of [['no identity', () => ({})] as [string, Forgery], ...FORGERIES]) {
        const res = await api(t.url(stack), t.method, t.path, { body: t.body, headers: forge(stack, t, victim) });
        expect401(res, t);
      }
    }
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before);
    expect((await api(stack.baseURL, 'GET', '/keys', { key: stack.key })).body.data).toHaveLength(keysBefore);
  });

  test('a genuine token works once on each internal port; its replay gets 401', async () => {
    for (const t of [TARGETS[2], TARGETS[3], TARGETS[5]]) {
      const token = { [IDENTITY_HEADER]: new IdentitySigner(stack.identitySecret, 'edge').mint({ method: t.method, path: t.path }, t.name.includes('anonymous') ? null : victim, 't') };
      expect((await api(t.url(stack), t.method, t.path, { headers: token })).status).toBe(200);
      expect401(await api(t.url(stack), t.method, t.path, { headers: token }), t);
    }
  });

  test("billing's gRPC refuses calls without credentials, with a forged or replayed token, or with another account's API key", async () => {
    const preauth = { account_id: victim.accountId, key_hash: victim.keyHash };
    const balance = { account_id: victim.accountId };
    const usage = { key_hashes: [victim.keyHash] };
    const path = (m: string) => `/gateway.billing.v1.BillingService/${m}`;
    const wrongSecret = (m: string) => ({ [IDENTITY_HEADER]: new IdentitySigner(randomBytes(32).toString('hex'), 'inference').mint({ method: 'GRPC', path: path(m) }, null, 't') });
    const otherAccountKey = { authorization: `Bearer ${stack.brokeKey}` };
    for (const [method, req] of [['Preauthorize', preauth], ['GetBalance', balance], ['GetKeyUsage', usage]] as const) {
      const refused: Array<Record<string, string>> = [{}, wrongSecret(method), otherAccountKey, { 'x-gw-account-id': victim.accountId, 'x-gw-key-hash': victim.keyHash }];
      for (const md of refused) {
        expect(await grpcStatus(billing, method, req, metadata(md))).toBe(grpc.status.UNAUTHENTICATED);
      }
    }
    const genuine = { [IDENTITY_HEADER]: new IdentitySigner(stack.identitySecret, 'inference').mint({ method: 'GRPC', path: path('GetBalance') }, null, 't') };
    expect(await grpcStatus(billing, 'GetBalance', balance, metadata(genuine))).toBe(grpc.status.OK);
    expect(await grpcStatus(billing, 'GetBalance', balance, metadata(genuine))).toBe(grpc.status.UNAUTHENTICATED);
    // The owner's own API key is a credential for its own account.
    expect(await grpcStatus(billing, 'GetBalance', balance, metadata({ authorization: `Bearer ${stack.key}` }))).toBe(grpc.status.OK);
    expect(await grpcStatus(billing, 'GetKeyUsage', usage, metadata({ authorization: `Bearer ${stack.key}` }))).toBe(grpc.status.OK);
  });

  test('internal and admin ports listen on 127.0.0.1 only; the edge public port on every interface, without probes or /metrics', async () => {
    const internalPorts = [stack.internal.inferenceURL, stack.internal.keysURL, stack.internal.billingURL, stack.internal.batchURL, stack.internal.edgeAdminURL]
      .map((u) => Number(new URL(u).port))
      .concat([stack.internal.keysGrpc, stack.internal.billingGrpc].map((a) => Number(a.split(':')[1])));
    for (const port of internalPorts) expect(listeners(port)).toEqual([LOOPBACK_V4]);
    expect(listeners(Number(new URL(stack.baseURL).port))).toEqual([ANY_V4]);
    const edgeRoot = stack.baseURL.replace(/\/v1$/, '');
    for (const p of ['/livez', '/readyz', '/metrics']) {
      expect((await fetch(`${edgeRoot}${p}`)).status).toBe(404);
      expect((await fetch(`${stack.internal.edgeAdminURL}${p}`)).status).toBe(200);
    }
  });
});
