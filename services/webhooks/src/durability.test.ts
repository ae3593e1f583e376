import { JobStore } from '@gw/jobs';
import type { RunningService } from '@gw/platform';
import { DELIVERY_JOB_KIND, type DeliveryPayload, type DeliveryResult } from './delivery';
import { DeliveryLog, type DeliveryAttemptDoc } from './delivery-log';
import {
  callbackEvent, publishCallback, startTestService, startTrustedReceiver, testLogger, TestLocation, waitFor,
} from './test-support';

jest.setTimeout(60_000);
const logger = testLogger();
const ACCOUNT = 'acct_durable';

describe.each(['embedded', 'mongo'] as const)('deliveries survive restarts and run once across instances (%s store)', (engine) => {
  let location: TestLocation;
  let trusted: Awaited<ReturnType<typeof startTrustedReceiver>>;
  const running: RunningService[] = [];

  beforeEach(async () => {
    location = await TestLocation.create(engine);
    trusted = await startTrustedReceiver();
  });

  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop();
    await trusted.remove();
    await location.destroy();
  });

  const start = async () => {
    const service = await startTestService(location.connect(logger), trusted.caFile, logger);
    running.push(service);
    return service;
  };
  const attemptsOf = (eventId: string): Promise<DeliveryAttemptDoc[]> => DeliveryLog.over(location.connect(logger).store).of(eventId);

  it('a delivery waiting to retry when its instance stops is finished by the next instance, with the policy kept', async () => {
    const { receiver } = trusted;
    let calls = 0;
    receiver.answer((_req, res) => { calls += 1; res.writeHead(calls <= 2 ? 502 : 200).end(); });
    const first = await start();
    const event = callbackEvent({ account_id: ACCOUNT, url: `${receiver.origin}/hook`, signed: false });
    await publishCallback(location.connect(logger).bus, event);
    await waitFor('the first attempt to fail', async () => (await attemptsOf(event.event_id)).some((a) => a.state === 'failed'));
    // Stopped while waiting out a backoff: its grace (2 s) covers the 1 s wait, not the 3 s one (on a slow
    // machine it may end in the first); either way the job is handed back, not lost, and not re-sent early.
    await first.stop();
    running.splice(running.indexOf(first), 1);
    expect(receiver.received.length).toBeLessThan(3);

    await start();
    await waitFor('the third attempt', () => receiver.received.length === 3, 30_000);
    expect(receiver.received[1].atMs - receiver.received[0].atMs).toBeGreaterThanOrEqual(1_000);
    expect(receiver.received[2].atMs - receiver.received[1].atMs).toBeGreaterThanOrEqual(3_000);
    await waitFor('the log', async () => (await attemptsOf(event.event_id)).at(-1)?.state === 'succeeded');
    expect((await attemptsOf(event.event_id)).map((a) => [a.attempt, a.state, a.response_status])).toEqual([[1, 'failed', 502], [2, 'failed', 502], [3, 'succeeded', 200]]);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(receiver.received).toHaveLength(3);
  });

  it('an instance that died mid-attempt: the attempt counts, another instance takes over once the lease lapses', async () => {
    const { store } = location.connect(logger);
    const jobs = new JobStore<DeliveryPayload, DeliveryResult>({ store, kind: DELIVERY_JOB_KIND });
    const event = callbackEvent({ account_id: ACCOUNT, url: `${trusted.receiver.origin}/hook`, signed: false });
    const payload: DeliveryPayload = { ...event, kind: 'batch', url: event.url };
    delete (payload as Partial<typeof event>).created_at_ms;
    await jobs.enqueue({ id: event.event_id, payload, ownerId: ACCOUNT, expiresAtMs: Date.now() + 60_000 });
    // The dead instance: it claimed the job and started attempt 1, then vanished without a word.
    expect(await jobs.claim('dead-worker', 1_000)).not.toBeNull();
    await DeliveryLog.over(store).start({ account_id: ACCOUNT, event_id: event.event_id, event: event.event, url: event.url, attempt: 1, started_at_ms: Date.now() });

    await start();
    await waitFor('the take-over delivery', () => trusted.receiver.received.length === 1, 30_000);
    await waitFor('the job to complete', async () => (await jobs.get(event.event_id))?.status === 'completed');
    expect((await attemptsOf(event.event_id)).map((a) => [a.attempt, a.state])).toEqual([[1, 'failed'], [2, 'succeeded']]);
    expect((await attemptsOf(event.event_id))[0].error).toContain('interrupted');
  });

  it('two instances on one event (published twice) deliver it once; a failing receiver still gets the policy once', async () => {
    const { receiver } = trusted;
    await start();
    await start();
    const once = callbackEvent({ account_id: ACCOUNT, url: `${receiver.origin}/once`, signed: false });
    const flaky = callbackEvent({ account_id: ACCOUNT, url: `${receiver.origin}/flaky`, signed: false });
    let flakyCalls = 0;
    receiver.answer((req, res) => {
      if (req.path === '/flaky') flakyCalls += 1;
      res.writeHead(req.path === '/flaky' && flakyCalls <= 2 ? 503 : 200).end();
    });
    for (const e of [once, flaky, once, flaky]) await publishCallback(location.connect(logger).bus, e);
    await waitFor('both events settled', async () => (await attemptsOf(flaky.event_id)).some((a) => a.state === 'succeeded'), 30_000);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.received.filter((r) => r.path === '/once')).toHaveLength(1);
    expect(receiver.received.filter((r) => r.path === '/flaky')).toHaveLength(3);
  });
});
