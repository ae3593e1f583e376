import type { RunningService } from '@gw/platform';
import type { WebhookSettingsDoc } from './settings-store';
import { callService, identityOf, startTestService, startTrustedReceiver, testLogger, TestLocation, waitFor, type TestEngines } from './test-support';

jest.setTimeout(60_000);
const logger = testLogger();

describe('webhooks HTTP API', () => {
  let location: TestLocation;
  let engines: TestEngines;
  let trusted: Awaited<ReturnType<typeof startTrustedReceiver>>;
  let service: RunningService;
  const admin = identityOf('acct_api');
  const ordinary = identityOf('acct_api', false);
  const call = (method: string, path: string, body?: unknown, who = admin) => callService(service.httpPort, method, path, who, body);

  beforeEach(async () => {
    location = await TestLocation.create('embedded');
    engines = location.connect(logger);
    trusted = await startTrustedReceiver();
    service = await startTestService(engines, trusted.caFile, logger);
  });

  afterEach(async () => {
    await service.stop();
    await trusted.remove();
    await location.destroy();
  });

  it('settings: none at first; the secret is shown once, in whsec_ form, and stored only sealed', async () => {
    expect(await call('GET', '/v1/webhooks/settings')).toEqual({ status: 200, body: { data: { url: null, has_secret: false, updated_at: null } } });

    const url = `${trusted.receiver.origin}/hooks`;
    const made = await call('PUT', '/v1/webhooks/settings', { url, rotate_secret: true });
    expect(made.status).toBe(200);
    expect(made.body.data).toEqual({ url, has_secret: true, updated_at: expect.any(String), secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });
    const { secret } = made.body.data;

    const read = await call('GET', '/v1/webhooks/settings');
    expect(read.body.data).toEqual({ url, has_secret: true, updated_at: made.body.data.updated_at });
    expect(JSON.stringify(read.body)).not.toContain(secret.slice(6));

    // Changing only the URL keeps the secret and does not show it again.
    const moved = await call('PUT', '/v1/webhooks/settings', { url: `${url}/v2` });
    expect(moved.body.data).toEqual({ url: `${url}/v2`, has_secret: true, updated_at: expect.any(String) });
    const rotated = await call('PUT', '/v1/webhooks/settings', { url: `${url}/v2`, rotate_secret: true });
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(secret);

    const stored = await engines.store.collection<WebhookSettingsDoc>('webhook_settings').findOne({ _id: 'acct_api' });
    expect(JSON.stringify(stored)).not.toContain(rotated.body.data.secret.slice(6));
    expect(stored?.sealed_secret).toMatch(/^v1\./);
  });

  it.each([
    ['http://example.com/hook', 'must use https'],
    ['https://127.0.0.1.nip.invalid/hook', 'does not resolve'],
    ['https://10.1.2.3/hook', 'private'],
    ['https://[::ffff:169.254.169.254]/', 'an IPv4-mapped IPv6 address'],
    ['https://0xa9fea9fe/latest', 'a link-local address'],
    ['not a url', 'valid absolute URL'],
  ])('PUT with url %s is a 400 naming `url` (%s)', async (url, message) => {
    const res = await call('PUT', '/v1/webhooks/settings', { url });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'url', type: 'invalid_request_error', message: expect.stringContaining(message) });
    expect((await call('GET', '/v1/webhooks/settings')).body.data.url).toBeNull();
  });

  it('malformed bodies are 400s naming the field; an ordinary key may read but not change settings', async () => {
    expect((await call('PUT', '/v1/webhooks/settings', { url: 42 })).body.error)
      .toMatchObject({ param: 'url', message: 'url must be an https URL of at most 2048 characters, or null to remove the webhook' });
    expect((await call('PUT', '/v1/webhooks/settings', {})).body.error).toMatchObject({ param: 'url', message: 'url is required: an https URL, or null to remove the webhook' });
    expect((await call('PUT', '/v1/webhooks/settings', [])).body.error).toMatchObject({ param: 'body', message: 'Request body must be a JSON object' });
    expect((await call('PUT', '/v1/webhooks/settings', { url: null, rotate_secret: 'yes' })).body.error).toMatchObject({ param: 'rotate_secret', message: 'rotate_secret must be true or false' });
    expect((await call('PUT', '/v1/webhooks/settings', { url: null, secret: 'mine' })).body.error).toMatchObject({ param: 'secret', code: 'unknown_parameter' });
    expect((await call('PUT', '/v1/webhooks/settings', { url: `${trusted.receiver.origin}/x` }, ordinary)).status).toBe(403);
    expect((await call('POST', '/v1/webhooks/test', undefined, ordinary)).status).toBe(403);
    expect((await call('GET', '/v1/webhooks/settings', undefined, ordinary)).status).toBe(200);
    // The delivery log's query reads as the other lists' (files, batches, images) do.
    expect((await call('GET', '/v1/webhooks/deliveries?limit=0')).body.error).toMatchObject({ param: 'limit', message: 'limit must be an integer from 1 to 100' });
    expect((await call('GET', '/v1/webhooks/deliveries?limit=1&limit=2')).body.error).toMatchObject({ param: 'limit', message: 'limit must be an integer from 1 to 100' });
    expect((await call('GET', '/v1/webhooks/deliveries?order=up')).body.error).toMatchObject({ param: 'order' });
    expect((await call('GET', '/v1/webhooks/deliveries?after=nope')).body.error).toMatchObject({ param: 'after', message: 'after names no item of this list: nope' });
    expect((await call('GET', '/v1/webhooks/nothing-here')).status).toBe(404);
  });

  it('test event: 400 without a URL; else a signed webhook.test delivered and listed newest first with cursors', async () => {
    expect((await call('POST', '/v1/webhooks/test')).body.error).toMatchObject({ param: 'url', code: 'webhook_not_configured' });
    await call('PUT', '/v1/webhooks/settings', { url: `${trusted.receiver.origin}/hooks`, rotate_secret: true });
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call('POST', '/v1/webhooks/test');
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({ event: 'webhook.test', url: `${trusted.receiver.origin}/hooks`, status: 'queued' });
      sent.push(res.body.data.event_id);
      await waitFor('the test event', () => trusted.receiver.received.length === i + 1);
    }
    const bodies = trusted.receiver.received.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.id)).toEqual(sent);
    expect(bodies[0]).toMatchObject({ object: 'event', event: 'webhook.test', created_at: expect.any(Number) });
    expect(trusted.receiver.received.every((r) => String(r.headers['svc-signature']).startsWith('sha256='))).toBe(true);

    await waitFor('all logged', async () => (await call('GET', '/v1/webhooks/deliveries')).body.data.filter((d: { status: string }) => d.status === 'succeeded').length === 3);
    const page1 = await call('GET', '/v1/webhooks/deliveries?limit=2');
    expect(page1.body).toMatchObject({ object: 'list', has_more: true, first_id: `${sent[2]}:1`, last_id: `${sent[1]}:1` });
    expect(page1.body.data[0]).toEqual({
      id: `${sent[2]}:1`, object: 'webhook.delivery_attempt', event_id: sent[2], event: 'webhook.test', url: `${trusted.receiver.origin}/hooks`,
      status: 'succeeded', attempt: 1, response_code: 200, latency_ms: expect.any(Number), error: null, created_at: expect.any(String),
    });
    const page2 = await call('GET', `/v1/webhooks/deliveries?limit=2&after=${encodeURIComponent(page1.body.last_id)}`);
    expect(page2.body).toMatchObject({ has_more: false, data: [{ event_id: sent[0] }] });
    const oldest = await call('GET', '/v1/webhooks/deliveries?order=asc&limit=2');
    expect(oldest.body).toMatchObject({ has_more: true, first_id: `${sent[0]}:1`, last_id: `${sent[1]}:1` });
    // Another account sees none of it.
    expect((await call('GET', '/v1/webhooks/deliveries', undefined, identityOf('acct_other'))).body.data).toEqual([]);
  });
});
