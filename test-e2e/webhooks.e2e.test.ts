import { createHmac, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { TOPICS, type CallbackRequested } from '@gw/proto';
import { api, expectEnvelope } from './harness/api';
import { waitFor } from './harness/ports';
import { useCallbackReceiver } from './harness/callback-receiver';
import { useStack } from './harness/stack';

jest.setTimeout(120_000);

describe('webhooks through the edge (processes: Kafka + MongoDB-wire)', () => {
  const callbacks = useCallbackReceiver('webhooks');
  const stack = useStack('processes', {
    env: { ...callbacks.env, WEBHOOKS_LEASE_MS: '3000', WEBHOOKS_POLL_MS: '200' },
  });

  const call = (method: string, p: string, body?: unknown) => api(stack.baseURL, method, p, { key: stack.key, body });
  let secret: string;

  it('settings: a refused address is a 400 naming url; the secret is shown once', async () => {
    expect((await call('GET', '/webhooks/settings')).body).toEqual({ data: { url: null, has_secret: false, updated_at: null } });
    // 167772161 is 10.0.0.1 in decimal; loopback itself is allowed in this stack (test-only switch).
    for (const url of ['https://169.254.169.254/latest', 'https://[::ffff:10.0.0.1]/', 'https://167772161/', 'https://0xa9.0xfe.0xa9.0xfe/', 'http://example.com/']) {
      expectEnvelope(await call('PUT', '/webhooks/settings', { url }), 400, undefined, 'url');
    }
    expect((await api(stack.baseURL, 'GET', '/webhooks/settings')).status).toBe(401);

    const put = await call('PUT', '/webhooks/settings', { url: `${callbacks.receiver.origin}/hooks`, rotate_secret: true });
    expect(put.status).toBe(200);
    secret = put.body.data.secret;
    expect(secret).toMatch(/^whsec_/);
    const read = await call('GET', '/webhooks/settings');
    expect(read.body).toEqual({ data: { url: `${callbacks.receiver.origin}/hooks`, has_secret: true, updated_at: put.body.data.updated_at } });
  });

  it('the test event arrives signed, verifies in both schemes, and is in the delivery log', async () => {
    const sent = await call('POST', '/webhooks/test');
    expect(sent.status).toBe(202);
    const eventId = sent.body.data.event_id;
    await waitFor('the test event', async () => callbacks.receiver.received.some((r) => r.headers['webhook-id'] === eventId), 30_000);
    const got = callbacks.receiver.received.find((r) => r.headers['webhook-id'] === eventId)!;
    expect(JSON.parse(got.body)).toMatchObject({ id: eventId, event: 'webhook.test' });
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toMatchObject({ id: eventId });
    const ts = got.headers['svc-timestamp'];
    expect(got.headers['svc-signature']).toBe(`sha256=${createHmac('sha256', secret).update(`${ts}.${got.body}`).digest('hex')}`);

    await waitFor('the log entry', async () => (await call('GET', '/webhooks/deliveries')).body.data.some((d: { event_id: string; status: string }) => d.event_id === eventId && d.status === 'succeeded'));
    const list = await call('GET', '/webhooks/deliveries?limit=1');
    expect(list.body).toMatchObject({ object: 'list', data: [{ event_id: eventId, event: 'webhook.test', attempt: 1, status: 'succeeded', response_code: 200 }] });
  });

  it('kill -9 of the webhooks service mid-retry: after restart the callback is delivered once, attempts counted across the crash', async () => {
    const eventId = `batch_${randomUUID()}:batch.completed`;
    let calls = 0;
    callbacks.receiver.answer((req, res) => {
      if (req.headers['webhook-id'] === eventId) calls += 1;
      res.writeHead(req.headers['webhook-id'] === eventId && calls === 1 ? 503 : 200).end();
    });
    const event: CallbackRequested = {
      event_id: eventId, account_id: stack.accountId, kind: 'batch', event: 'batch.completed', url: '', signed: true,
      body_json: JSON.stringify({ id: eventId.split(':')[0], object: 'batch', status: 'completed', event: 'batch.completed' }), created_at_ms: Date.now(), traceparent: '',
    };
    await stack.bus.publish(TOPICS.callbacks, [{ key: eventId, value: event }]);
    await waitFor('the first attempt', async () => calls === 1, 30_000);
    await stack.processes!.kill('webhooks');
    // Published again while it is down: still one delivery.
    await stack.bus.publish(TOPICS.callbacks, [{ key: eventId, value: event }]);
    await stack.processes!.start('webhooks');
    await waitFor('the delivery after the restart', async () => calls === 2, 60_000);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(calls).toBe(2);
    const attempts = (await call('GET', '/webhooks/deliveries?limit=100')).body.data.filter((d: { event_id: string }) => d.event_id === eventId);
    expect(attempts.map((a: { attempt: number; status: string }) => [a.attempt, a.status])).toEqual([[2, 'succeeded'], [1, 'failed']]);
  });
});
