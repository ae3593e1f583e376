import { REQUEST_COUNT_PATH } from '@gw/simulators';
import { api, spendableMicros, waitForBilledRequest } from '../test-e2e/harness/api';
import { E2E_MODEL, E2E_SLOW_MODEL, E2E_TRICKLE_MODEL } from '../test-e2e/harness/catalog';
import { useCallbackReceiver } from '../test-e2e/harness/callback-receiver';
import { waitFor } from '../test-e2e/harness/ports';
import { useStack, type ServiceName, type TestStack } from '../test-e2e/harness/stack';
import { E2E_VIDEO_MODEL } from '../test-e2e/harness/video-catalog';
import { checkBilledOnce } from './harness/billing-check';
import { reportFigures, type Figures } from './harness/figures';
import { chatCall, countEnds, startLoad, type CallOutcome, type Load, type LoadOptions } from './harness/traffic';

jest.setTimeout(120_000);

/**
 * kill -9 of each service in turn while it works (issue #12): inference mid-stream, billing mid-consume, batch
 * mid-fan-out, media mid-poll, webhooks mid-delivery. After each restart: no lost or doubled charge (a billing
 * record per request id, and the balance fell by exactly their sum), no lost callback, and duplicates only as
 * the spec allows (a callback is at most 3 attempts; receivers deduplicate on id and status).
 */
const ACCOUNTS = ['inference', 'billing', 'batch', 'media', 'webhooks'].map((s) => ({ id: `acct_kill9_${s}`, credit_usd: '5' }));
/** USD 0.02 per video second (the e2e video catalogue), in micros. */
const VIDEO_MICROS_PER_SECOND = 20_000;
/** A receiver that takes this long to acknowledge keeps deliveries in flight when the webhooks service dies. */
const SLOW_ACK_MS = 700;

const figures: Figures = {};

describe('kill -9 of each service mid-work (processes: Kafka + MongoDB-wire)', () => {
  const callbacks = useCallbackReceiver('kill-nine');
  const stack = useStack('processes', {
    accounts: ACCOUNTS,
    env: {
      ...callbacks.env,
      // Short leases and polls: a dead instance's work is taken over within a drill's patience.
      OPEN_CALL_LEASE_MS: '3000', OPEN_CALL_SWEEP_MS: '1000',
      BATCH_LEASE_MS: '3000', BATCH_POLL_MS: '200', BATCH_PROGRESS_MS: '200',
      VIDEO_POLL_MIN_MS: '200', VIDEO_POLL_MAX_MS: '500', VIDEO_LEASE_MS: '3000', VIDEO_CLAIM_POLL_MS: '200',
      WEBHOOKS_LEASE_MS: '3000', WEBHOOKS_POLL_MS: '200',
    },
  });
  const keyOf = (service: string) => stack.accountKeys[`acct_kill9_${service}`];

  beforeAll(() => {
    callbacks.receiver.answer((req, res) => {
      if (req.path.startsWith('/slow/')) setTimeout(() => res.writeHead(200).end(), SLOW_ACK_MS);
      else res.writeHead(200).end();
    });
  });
  afterAll(() => {
    if (Object.keys(figures).length > 0) reportFigures('kill-nine', figures);
  });

  // A step that failed must not leave its load running (jest would never exit).
  const loads: Load[] = [];
  const load = (opts: LoadOptions) => { const l = startLoad(opts); loads.push(l); return l; };
  afterEach(async () => { await Promise.all(loads.splice(0).map((l) => l.stop())); });

  /** SIGKILL, then a new process; resolves with the time from the kill to the new one being ready. */
  async function crash(name: ServiceName): Promise<number> {
    const at = Date.now();
    await stack.processes!.kill(name, 'SIGKILL');
    await stack.processes!.start(name);
    return Date.now() - at;
  }

  /**
   * The billed ids' records exist once each and add up to the balance's fall. `unanswered`: calls the kill cut
   * after the provider answered them but before the client got the answer; each may be billed (once) too, since
   * a call's usage is made durable before its answer leaves (otherwise a kill right after answering lost it).
   */
  async function expectExactlyOnce(service: string, ids: string[], before: number, outcomes: CallOutcome[] = [], killedAt = 0, unanswered: CallOutcome[] = []): Promise<void> {
    const check = await checkBilledOnce(stack.baseURL, keyOf(service), ids, before);
    // A lost charge named with how its call went, relative to the kill.
    const lost = check.missing.map((id) => {
      const o = outcomes.find((c) => c.requestId === id);
      return o ? `${id} ${o.end} streamed=${o.streamed} started ${o.startedAt - killedAt} ms, ended ${o.endedAt - killedAt} ms from the kill` : id;
    });
    Object.assign(figures, {
      [`${service}_charges_checked`]: check.billed, [`${service}_charges_lost`]: check.missing.length,
      [`${service}_charged_micros`]: check.chargedMicros, [`${service}_balance_drop_micros`]: check.balanceDropMicros,
    });
    expect(lost).toEqual([]);
    expect(check.billed).toBe(new Set(ids).size);
    // At most one charge per unanswered call, each no more than the dearest answered one.
    const unansweredBound = unanswered.length * Math.max(0, ...outcomes.filter((o) => o.end === 'answered').map((o) => check.charges.get(o.requestId!) ?? 0));
    const unansweredMicros = check.balanceDropMicros - check.chargedMicros;
    Object.assign(figures, { [`${service}_unanswered_calls`]: unanswered.length, [`${service}_unanswered_billed_micros`]: unansweredMicros });
    expect(unansweredMicros).toBeGreaterThanOrEqual(0);
    expect(unansweredMicros).toBeLessThanOrEqual(unansweredBound);
  }

  const chat = (service: string, stream: boolean, model = E2E_MODEL, content = 'kill nine drill') =>
    ({ baseURL: stack.baseURL, key: keyOf(service), model, content, stream, deadlineMs: 45_000 });

  /** Every call answered or cleanly refused: none hung, none broke outside the documented stream error event. */
  function expectCleanEnds(outcomes: CallOutcome[]): void {
    expect(outcomes.filter((o) => o.end === 'hang' || o.end === 'broken' || o.end === 'closed-before-response').map((o) => `${o.end} ${o.status} ${o.detail}`)).toEqual([]);
  }

  test('inference mid-stream: cut streams end with their error event, and every call is billed once', async () => {
    const before = await spendableMicros(stack.baseURL, keyOf('inference'));
    // ~100 words at one chunk per 200 ms: twenty seconds of stream, every one of them in flight at the kill.
    const words = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    const streams = Array.from({ length: 6 }, () => chatCall(chat('inference', true, E2E_TRICKLE_MODEL, words)));
    const traffic = load({ workers: 3, call: (w, n) => chat('inference', n % 2 === 0, E2E_MODEL, `load ${w}.${n}`) });
    await waitFor('calls answered under load', async () => countEnds(traffic.outcomes).answered >= 10, 30_000);
    await new Promise((r) => setTimeout(r, 2_500)); // the streams past their first journal checkpoint
    const killedAt = Date.now();
    const inFlight = traffic.inFlightAt(killedAt) + streams.length;
    const readyMs = await crash('inference');
    await waitFor('calls answered again', async () => traffic.outcomes.some((o) => o.startedAt > killedAt + readyMs && o.end === 'answered'), 60_000);
    const outcomes = [...await traffic.stop(), ...await Promise.all(streams)];
    const cut = outcomes.filter((o) => o.end === 'stream-error');
    expectCleanEnds(outcomes);
    // Every trickling stream was cut by the kill, and its end reached the client as the error event.
    expect(cut.length).toBeGreaterThanOrEqual(streams.length);
    const billed = outcomes.filter((o) => o.end === 'answered' || o.end === 'stream-error').map((o) => o.requestId!);
    // Calls under way at the kill that the client saw refused: their provider may have answered them already.
    const unanswered = outcomes.filter((o) => o.end === 'refused' && o.startedAt <= killedAt);
    await expectExactlyOnce('inference', billed, before, outcomes, killedAt, unanswered);
    Object.assign(figures, {
      inference_in_flight: inFlight, inference_ready_ms: readyMs, inference_refusing_ms: refusingMs(outcomes, killedAt), inference_settled_ms: Date.now() - killedAt,
      inference_answered: countEnds(outcomes).answered, inference_streams_cut: cut.length, inference_refused: countEnds(outcomes).refused,
    });
  });

  test('billing mid-consume: usage that waited in the bus is billed once after the restart', async () => {
    const before = await spendableMicros(stack.baseURL, keyOf('billing'));
    const traffic = load({ workers: 4, call: (w, n) => chat('billing', n % 3 === 0, E2E_MODEL, `usage ${w}.${n}`) });
    await waitFor('usage flowing', async () => countEnds(traffic.outcomes).answered >= 30, 30_000);
    const killedAt = Date.now();
    const inFlight = traffic.inFlightAt(killedAt);
    const answeredBefore = countEnds(traffic.outcomes).answered;
    const readyMs = await crash('billing');
    await waitFor('calls answered again', async () => traffic.outcomes.some((o) => o.startedAt > killedAt + readyMs && o.end === 'answered'), 60_000);
    const outcomes = await traffic.stop();
    expectCleanEnds(outcomes);
    const billed = outcomes.filter((o) => o.end === 'answered' || o.end === 'stream-error').map((o) => o.requestId!);
    await expectExactlyOnce('billing', billed, before, outcomes, killedAt);
    Object.assign(figures, {
      billing_in_flight: inFlight, billing_answered_before_kill: answeredBefore, billing_ready_ms: readyMs,
      billing_refusing_ms: refusingMs(outcomes, killedAt), billing_settled_ms: Date.now() - killedAt,
      billing_answered: countEnds(outcomes).answered, billing_refused: countEnds(outcomes).refused,
    });
  });

  test('batch mid-fan-out: the batch completes, each line runs and bills once, one callback', async () => {
    const key = keyOf('batch');
    const before = await spendableMicros(stack.baseURL, key);
    const upstreamBefore = await slowSimulatorCalls(stack);
    const ids = Array.from({ length: 32 }, (_, i) => `line-${i}`);
    const batchId = await createBatch(stack, key, ids, `${callbacks.receiver.origin}/batch/${Date.now()}`);
    const progress = async () => (await api(stack.baseURL, 'GET', `/batches/${batchId}`, { key })).body;
    await waitFor('lines answered', async () => ((await progress()).request_counts?.completed ?? 0) >= 6, 60_000);
    const killedAt = Date.now();
    const doneAtKill = (await progress()).request_counts.completed as number;
    const readyMs = await crash('batch');
    let batch: any; // eslint-disable-line @typescript-eslint/no-explicit-any
    await waitFor('the batch to finish', async () => ['completed', 'failed'].includes((batch = await progress()).status), 90_000);
    const settledMs = Date.now() - killedAt;
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: ids.length, completed: ids.length, failed: 0 } });
    const lines = await outputLines(stack, key, batch.output_file_id);
    expect(lines.map((l) => l.custom_id).sort()).toEqual([...ids].sort());
    const lineIds = lines.map((l) => l.response.request_id);
    expect(new Set(lineIds).size).toBe(ids.length);
    await expectExactlyOnce('batch', lineIds, before);
    expect(batch.usage_billing.charged_cost_micros).toBe(figures.batch_charged_micros);
    const upstream = (await slowSimulatorCalls(stack)) - upstreamBefore;
    expect(upstream).toBe(ids.length);
    const delivered = await callbacksFor(batchId, 1);
    Object.assign(figures, {
      batch_lines: ids.length, batch_lines_done_at_kill: doneAtKill, batch_ready_ms: readyMs, batch_settled_ms: settledMs,
      batch_upstream_calls: upstream, batch_callbacks_received: delivered, batch_callback_duplicates: delivered - 1,
    });
  });

  test('media mid-poll: each video completes, is billed once per second, and calls back', async () => {
    const key = keyOf('media');
    const before = await spendableMicros(stack.baseURL, key);
    const tag = Date.now();
    const videos: string[] = [];
    for (let i = 0; i < 4; i++) {
      const made = await api(stack.baseURL, 'POST', '/videos', {
        key, body: { model: E2E_VIDEO_MODEL, prompt: `sim-slow take ${i}`, duration: 4, callback_url: `${callbacks.receiver.origin}/video/${tag}/${i}` },
      });
      expect(made.status).toBe(200);
      videos.push(made.body.id);
    }
    const statuses = async () => Promise.all(videos.map(async (id) => (await api(stack.baseURL, 'GET', `/videos/${id}`, { key })).body.status as string));
    await waitFor('every video polled upstream', async () => (await statuses()).every((s) => s === 'in_progress'), 30_000);
    const killedAt = Date.now();
    const readyMs = await crash('media');
    await waitFor('every video finished', async () => (await statuses()).every((s) => s === 'completed' || s === 'failed'), 60_000);
    const settledMs = Date.now() - killedAt;
    expect(await statuses()).toEqual(videos.map(() => 'completed'));
    for (const id of videos) await waitForBilledRequest(stack.baseURL, key, id);
    await expectExactlyOnce('media', videos, before);
    expect(figures.media_charged_micros).toBe(videos.length * 4 * VIDEO_MICROS_PER_SECOND);
    let received = 0;
    for (let i = 0; i < videos.length; i++) received += await callbacksFor(`/video/${tag}/${i}`, 1, 'path');
    Object.assign(figures, {
      media_in_flight: videos.length, media_ready_ms: readyMs, media_settled_ms: settledMs,
      media_callbacks_received: received, media_callback_duplicates: received - videos.length,
    });
  });

  test('webhooks mid-delivery: every callback arrives, duplicates at most one per delivery cut by the kill', async () => {
    const key = keyOf('webhooks');
    const tag = Date.now();
    const put = await api(stack.baseURL, 'PUT', '/webhooks/settings', { key, body: { url: `${callbacks.receiver.origin}/slow/${tag}`, rotate_secret: true } });
    expect(put.status).toBe(200);
    const events: string[] = [];
    for (let i = 0; i < 24; i++) {
      const sent = await api(stack.baseURL, 'POST', '/webhooks/test', { key });
      expect(sent.status).toBe(202);
      events.push(sent.body.data.event_id);
    }
    const arrivals = (id: string) => callbacks.receiver.received.filter((r) => r.path === `/slow/${tag}` && r.headers['webhook-id'] === id);
    await waitFor('deliveries under way', async () => events.filter((id) => arrivals(id).length > 0).length >= 6, 30_000);
    const killedAt = Date.now();
    // The deliveries the kill can cut: arrived and not yet acknowledged, or acknowledged so recently (1 s) that
    // the ack may still be on its way back or the delivery's completion not yet written.
    const inFlight = callbacks.receiver.received.filter((r) => r.path === `/slow/${tag}` && r.atMs > killedAt - SLOW_ACK_MS - 1_000).length;
    const readyMs = await crash('webhooks');
    await waitFor('every callback delivered', async () => events.every((id) => arrivals(id).length > 0), 60_000);
    const settledMs = Date.now() - killedAt;
    // Attempts the restarted service may still make (1 s, then 3 s backoff) have had their time.
    await new Promise((r) => setTimeout(r, 4_000));
    const perEvent = events.map((id) => arrivals(id).length);
    const duplicates = perEvent.reduce((a, n) => a + n - 1, 0);
    expect(perEvent.every((n) => n >= 1 && n <= 3)).toBe(true);
    expect(duplicates).toBeLessThanOrEqual(inFlight);
    Object.assign(figures, {
      webhooks_events: events.length, webhooks_in_flight: inFlight, webhooks_ready_ms: readyMs, webhooks_settled_ms: settledMs,
      webhooks_callbacks_received: perEvent.reduce((a, n) => a + n, 0), webhooks_duplicates: duplicates,
    });
  });

  /** Callbacks whose path (or body, for a batch id) matches; waits for `atLeast`, then a few seconds for stragglers. */
  async function callbacksFor(match: string, atLeast: number, by: 'body' | 'path' = 'body'): Promise<number> {
    const got = () => callbacks.receiver.received.filter((r) => (by === 'path' ? r.path === match : r.body.includes(match))).length;
    await waitFor(`callback ${match}`, async () => got() >= atLeast, 30_000);
    await new Promise((r) => setTimeout(r, 1_500));
    const n = got();
    expect(n).toBeGreaterThanOrEqual(atLeast);
    expect(n).toBeLessThanOrEqual(3);
    return n;
  }
});

/** How long clients were refused: from the kill to the start of the last call refused (0: none was). */
function refusingMs(outcomes: CallOutcome[], killedAt: number): number {
  return Math.max(0, ...outcomes.filter((o) => o.end === 'refused').map((o) => o.startedAt - killedAt));
}

/** A platform batch of chat lines on the slow model (3 s each): a fan-out that is mid-way for a while. */
async function createBatch(stack: TestStack, key: string, customIds: string[], callbackUrl: string): Promise<string> {
  const jsonl = customIds.map((id) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: E2E_SLOW_MODEL, messages: [{ role: 'user', content: id }] } })).join('\n');
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([jsonl], { type: 'application/jsonl' }), 'lines.jsonl');
  const file = await fetch(`${stack.baseURL}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  expect(file.status).toBe(200);
  const fileId = ((await file.json()) as { id: string }).id;
  const created = await api(stack.baseURL, 'POST', '/batches', {
    key, body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', execution: 'platform', callback_url: callbackUrl },
  });
  expect(created.status).toBe(200);
  return created.body.id;
}

interface OutputLine { custom_id: string; response: { request_id: string } }

async function outputLines(stack: TestStack, key: string, fileId: string): Promise<OutputLine[]> {
  const res = await fetch(`${stack.baseURL}/files/${fileId}/content`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as OutputLine);
}

async function slowSimulatorCalls(stack: TestStack): Promise<number> {
  const res = await fetch(`${stack.slowSimulatorURL.replace(/\/v1$/, '')}${REQUEST_COUNT_PATH}`);
  return ((await res.json()) as { requests: number }).requests;
}
