import { IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { TOPICS } from '@gw/proto';
import { BILLING_TEST_SECRET, Engines, eventually, STORE_ENGINES, usageEvent } from './test-harness';

const KEY = 'aa'.repeat(32);

describe.each(STORE_ENGINES)('billing HTTP (%s store, embedded bus, usage through the bus)', (engine) => {
  let engines: Engines;
  let service: RunningService;
  const plain = usageEvent({ provider_response_id: 'chatcmpl-abc', trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
  const image = usageEvent({ api_type: 'image', provider_response_id: 'req_img/upstream', media_ids: ['img_first', 'img_second'], usage: { generated_images: 2 } as never });
  const slashed = usageEvent({
    account_id: 'acct_ent', deployment: 'dep-fee', api_type: 'video', streamed: true, cancelled: true, finish_reason: '',
    provider_response_id: 'projects/p1/locations/us/operations/op-9',
    usage: { input_tokens: 1000, output_tokens: 500, video_duration_seconds: 4.5 } as never,
    usage_estimated: true,
  });

  beforeAll(async () => {
    engines = await Engines.open(engine);
    service = await engines.startService({ seeds: [{ id: 'acct_a', wallet_usd: '2.5', credit_usd: '10' }, { id: 'acct_ent', wallet_usd: '50', price_factor: '0.8' }] });
    await engines.bus.publish(TOPICS.usage, [plain, slashed, image].map((value) => ({ key: value.account_id, value })));
    await eventually('both events recorded', async () => (await get(`/v1/billing/requests/${slashed.request_id}`, 'acct_ent')).status === 200 &&
      (await get('/v1/billing/balance')).body.data.wallet === '2.499800');
  });

  afterAll(async () => {
    await service.stop();
    await engines.close();
  });

  /** As the edge calls billing: an identity token signed with the platform secret, bound to this request. */
  async function get(path: string, accountId: string | null = 'acct_a', headers: Record<string, string> = {}) {
    if (accountId) {
      const identity = { accountId, keyHash: KEY, isManagement: false, keyLimitMicros: null, keyLimitReset: null };
      headers[IDENTITY_HEADER] = new IdentitySigner(BILLING_TEST_SECRET, 'edge').mint({ method: 'GET', path }, identity, 'trace-billing-test');
    }
    const res = await fetch(`http://127.0.0.1:${service.httpPort}${path}`, { headers });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, body: (await res.json()) as any };
  }

  test('balance: wallet, credit and spendable as USD decimal strings', async () => {
    expect(await get('/v1/billing/balance')).toEqual({
      status: 200,
      body: { data: { wallet: '2.499800', credit: '10.000000', spendable: '12.499800', currency: 'USD' } },
    });
  });

  test('lookup by request_id', async () => {
    const { status, body } = await get(`/v1/billing/requests/${plain.request_id}`);
    expect(status).toBe(200);
    expect(body.data).toEqual({
      request_id: plain.request_id, id: 'chatcmpl-abc', created_at: '2026-11-02T10:00:00.000Z', model: 'test/chat', provider_name: 'sim',
      api_type: 'chat', status: 'succeeded', streamed: false, cancelled: false, usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      usage_estimated: false,
      list_cost: '0.000200', charged_cost: '0.000200', price_factor: '1', latency_ms: 120, generation_time_ms: 100, finish_reason: 'stop', key_hash: KEY,
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    });
  });

  test('lookup by a provider id containing slashes, raw or percent-encoded', async () => {
    const raw = await get('/v1/billing/requests/projects/p1/locations/us/operations/op-9', 'acct_ent');
    expect(raw.status).toBe(200);
    // 1000 x 1 + 500 x 2 + 10,000 fee = 12,000 micros list; x 0.8 = 9,600 charged.
    expect(raw.body.data).toMatchObject({
      request_id: slashed.request_id, id: 'projects/p1/locations/us/operations/op-9', api_type: 'video', streamed: true, cancelled: true,
      usage: { input_tokens: 1000, output_tokens: 500, video_duration_seconds: 4.5 }, usage_estimated: true, list_cost: '0.012000', charged_cost: '0.009600',
      price_factor: '0.8', finish_reason: null, trace_id: null,
    });
    const encoded = await get(`/v1/billing/requests/${encodeURIComponent('projects/p1/locations/us/operations/op-9')}`, 'acct_ent');
    expect(encoded.body.data.request_id).toBe(slashed.request_id);
  });

  test('lookup by each media id of the call (image record ids), beside its request id and provider id', async () => {
    await eventually('image call recorded', async () => (await get(`/v1/billing/requests/${image.request_id}`)).status === 200);
    for (const id of ['img_first', 'img_second', 'req_img/upstream', image.request_id]) {
      const { status, body } = await get(`/v1/billing/requests/${id}`);
      expect(status).toBe(200);
      expect(body.data).toMatchObject({ request_id: image.request_id, id: 'req_img/upstream', api_type: 'image', usage: { generated_images: 2 } });
    }
    expect((await get('/v1/billing/requests/img_first', 'acct_ent')).status).toBe(404);
  });

  test("another account's request is a 404 in the spec envelope, as is an unknown id", async () => {
    for (const path of [`/v1/billing/requests/${slashed.request_id}`, '/v1/billing/requests/projects/p1/locations/us/operations/op-9', '/v1/billing/requests/br-nope']) {
      const { status, body } = await get(path, 'acct_a');
      expect(status).toBe(404);
      expect(body).toMatchObject({ code: '404', error: { type: 'not_found_error', code: 'request_not_found', param: 'request_id' } });
      expect(body.traceId).toEqual(body.error.traceId);
    }
  });

  test('without the identity the edge attaches -> 401', async () => {
    const { status, body } = await get('/v1/billing/balance', null);
    expect(status).toBe(401);
    expect(body.error.type).toBe('authentication_error');
  });

  test("a record's key_hash impersonates no one: the victim's account and hash, sent without a genuine token, get 401", async () => {
    const { body } = await get(`/v1/billing/requests/${plain.request_id}`);
    const victim = { 'x-gw-account-id': 'acct_a', 'x-gw-key-hash': body.data.key_hash, 'x-gw-key-management': 'true' };
    const forged = new IdentitySigner('an-attacker-guess-at-the-secret-0123456789', 'edge').mint(
      { method: 'GET', path: '/v1/billing/balance' },
      { accountId: 'acct_a', keyHash: body.data.key_hash, isManagement: true, keyLimitMicros: null, keyLimitReset: null }, 't');
    for (const headers of [victim, { ...victim, [IDENTITY_HEADER]: forged }]) {
      const res = await get('/v1/billing/balance', null, headers);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: '401', error: { type: 'authentication_error' } });
      expect(JSON.stringify(res.body)).not.toContain('12.499800');
    }
  });

  test('readiness tells the truth about store, bus and the usage, archive and failed-call consumers', async () => {
    const { status, body } = await get('/readyz', null);
    expect(status).toBe(200);
    expect(body).toEqual({ ready: true, checks: { store: true, bus: true, 'usage-consumer': true, 'archive-consumer': true, 'call-failures-consumer': true }, degraded: [] });
  });
});
