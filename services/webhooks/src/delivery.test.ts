import { Webhook } from 'standardwebhooks';
import type { RunningService } from '@gw/platform';
import type { TlsReceiver } from '@gw/net-guard/src/testing/tls-receiver';
import { JobStore } from '@gw/jobs';
import { TOPICS } from '@gw/proto';
import { DELIVERY_JOB_KIND } from './delivery';
import {
  callbackEvent, callService, identityOf, publishCallback, startTestService, startTrustedReceiver, testLogger, TestLocation, waitFor,
  type TestEngines,
} from './test-support';

jest.setTimeout(60_000);
const logger = testLogger();
const ACCOUNT = 'acct_hooks';

describe('webhook delivery (real store and bus, HTTPS receiver)', () => {
  let location: TestLocation;
  let engines: TestEngines;
  let trusted: Awaited<ReturnType<typeof startTrustedReceiver>>;
  let receiver: TlsReceiver;
  let service: RunningService;
  let secret: string;

  beforeEach(async () => {
    location = await TestLocation.create('embedded');
    engines = location.connect(logger);
    trusted = await startTrustedReceiver();
    receiver = trusted.receiver;
    service = await startTestService(engines, trusted.caFile, logger);
    const put = await callService(service.httpPort, 'PUT', '/v1/webhooks/settings', identityOf(ACCOUNT), { url: `${receiver.origin}/default`, rotate_secret: true });
    expect(put.status).toBe(200);
    secret = put.body.data.secret;
  });

  afterEach(async () => {
    await service.stop();
    await trusted.remove();
    await location.destroy();
  });

  const deliveries = async () => (await callService(service.httpPort, 'GET', '/v1/webhooks/deliveries?limit=100', identityOf(ACCOUNT))).body.data as { event_id: string; attempt: number; status: string; response_code: number | null; error: string | null }[];

  it('delivers a batch callback to the default URL, signed in both schemes over the exact bytes', async () => {
    const event = callbackEvent({ account_id: ACCOUNT });
    await publishCallback(engines.bus, event);
    await waitFor('the callback', () => receiver.received.length === 1);
    const [got] = receiver.received;
    expect(got).toMatchObject({ method: 'POST', path: '/default', body: event.body_json });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(event.event_id);
    expect(got.headers['svc-timestamp']).toBe(got.headers['webhook-timestamp']);
    expect(Math.abs(Number(got.headers['svc-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    // The Standard Webhooks library verifies with the secret exactly as the account was shown it.
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toEqual(JSON.parse(event.body_json));
    // The spec's scheme, keyed with the same secret string.
    const { createHmac } = await import('node:crypto');
    expect(got.headers['svc-signature']).toBe(`sha256=${createHmac('sha256', secret).update(`${got.headers['svc-timestamp']}.${got.body}`).digest('hex')}`);
    await waitFor('the log', async () => (await deliveries())[0]?.status === 'succeeded');
    expect(await deliveries()).toMatchObject([{ event_id: event.event_id, attempt: 1, status: 'succeeded', response_code: 200, error: null }]);
  });

  it('a receiver failing twice then succeeding gets exactly 3 attempts, 1 s then 3 s apart', async () => {
    let calls = 0;
    receiver.answer((_req, res) => { calls += 1; res.writeHead(calls <= 2 ? 503 : 200).end(); });
    const event = callbackEvent({ account_id: ACCOUNT, url: `${receiver.origin}/flaky` });
    await publishCallback(engines.bus, event);
    await waitFor('three attempts', () => receiver.received.length === 3, 30_000);
    const [a, b, c] = receiver.received.map((r) => r.atMs);
    expect(b - a).toBeGreaterThanOrEqual(1_000);
    expect(b - a).toBeLessThan(2_500);
    expect(c - b).toBeGreaterThanOrEqual(3_000);
    expect(c - b).toBeLessThan(4_500);
    expect(new Set(receiver.received.map((r) => r.body))).toEqual(new Set([event.body_json]));
    await waitFor('the log', async () => (await deliveries()).length === 3 && (await deliveries())[0].status === 'succeeded');
    expect((await deliveries()).map((d) => [d.attempt, d.status, d.response_code])).toEqual([[3, 'succeeded', 200], [2, 'failed', 503], [1, 'failed', 503]]);
    // Nothing more is sent after the 2xx.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.received).toHaveLength(3);
  });

  it('gives up after 3 failed attempts and never redelivers', async () => {
    receiver.answer((_req, res) => { res.writeHead(500).end(); });
    const event = callbackEvent({ account_id: ACCOUNT });
    await publishCallback(engines.bus, event);
    const jobs = new JobStore({ store: engines.store, kind: DELIVERY_JOB_KIND });
    await waitFor('the job to give up', async () => (await jobs.get(event.event_id))?.status === 'failed', 30_000);
    expect(receiver.received).toHaveLength(3);
    expect((await jobs.get(event.event_id))?.error).toMatchObject({ code: 'callback_undelivered' });
    await publishCallback(engines.bus, event);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.received).toHaveLength(3);
  });

  it('a republished event makes no second delivery', async () => {
    const event = callbackEvent({ account_id: ACCOUNT });
    await publishCallback(engines.bus, event);
    await publishCallback(engines.bus, event);
    await waitFor('the callback', () => receiver.received.length >= 1);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.received).toHaveLength(1);
  });

  it('video callbacks go to their own URL and carry no signature, even when the account has a secret', async () => {
    const event = callbackEvent({ account_id: ACCOUNT, kind: 'video', event: 'video.completed', url: `${receiver.origin}/video`, signed: false });
    await publishCallback(engines.bus, event);
    await waitFor('the callback', () => receiver.received.length === 1);
    const headers = Object.keys(receiver.received[0].headers);
    expect(receiver.received[0].path).toBe('/video');
    expect(headers.filter((h) => h.startsWith('svc-') || h.startsWith('webhook-'))).toEqual([]);
  });

  it('redirects are followed through the guard: a chain ending in 2xx is a success, a hop to an internal address a failure', async () => {
    receiver.answer((req, res) => {
      if (req.path === '/moved') res.writeHead(307, { location: '/final' }).end();
      else if (req.path === '/to-metadata') res.writeHead(307, { location: 'https://169.254.169.254/latest' }).end();
      else res.writeHead(200).end();
    });
    const good = callbackEvent({ account_id: ACCOUNT, url: `${receiver.origin}/moved` });
    await publishCallback(engines.bus, good);
    await waitFor('the redirected callback', () => receiver.received.some((r) => r.path === '/final'));
    const bad = callbackEvent({ account_id: ACCOUNT, url: `${receiver.origin}/to-metadata` });
    await publishCallback(engines.bus, bad);
    await waitFor('three refused attempts', async () => (await deliveries()).filter((d) => d.event_id === bad.event_id && d.status === 'failed').length === 3, 30_000);
    const refused = (await deliveries()).find((d) => d.event_id === bad.event_id);
    expect(refused?.error).toContain('a link-local address');
    expect((await deliveries()).find((d) => d.event_id === good.event_id)).toMatchObject({ status: 'succeeded', response_code: 200 });
  });

  it('an event without a URL for an account without a default webhook, or malformed, is not delivered; later ones are', async () => {
    await publishCallback(engines.bus, callbackEvent({ account_id: 'acct_without_webhook' }));
    await publishCallback(engines.bus, callbackEvent({ account_id: ACCOUNT, kind: 'fax' }));
    await engines.bus.publish(TOPICS.callbacks, [{ key: 'garbage', value: { account_id: ACCOUNT, url: receiver.origin } }]);
    const marker = callbackEvent({ account_id: ACCOUNT });
    await publishCallback(engines.bus, marker);
    await waitFor('the later callback', () => receiver.received.length === 1);
    expect(receiver.received[0].headers['webhook-id']).toBe(marker.event_id);
  });
});
