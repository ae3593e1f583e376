import { usdToMicros } from '@gw/platform';
import { REQUEST_COUNT_PATH } from '@gw/simulators';
import { api, expectEnvelope, spendableMicros, type ApiResponse } from '../test-e2e/harness/api';
import { useCallbackReceiver } from '../test-e2e/harness/callback-receiver';
import { E2E_MODEL, E2E_SLOW_MODEL } from '../test-e2e/harness/catalog';
import { waitFor } from '../test-e2e/harness/ports';
import { useStack } from '../test-e2e/harness/stack';
import { E2E_VIDEO_MODEL } from '../test-e2e/harness/video-catalog';
import { reportFigures, type Figures } from './harness/figures';

/**
 * Replicas: two instances of every service on one Kafka and one MongoDB-wire server, traffic spread over both
 * edges (each edge in front of its own set of services). Every job, batch line, video task and callback runs
 * once; a key's requests per minute, a key's spend limit and an account's credit hold across the instances.
 */
jest.setTimeout(120_000);

const RPM = 20;
const RPM_BURST = 60;
const SPEND_BURST = 50;
const ALLOWANCE_USD = '0.0005';
const JOBS = 16;
const LINES_PER_BATCH = 10;
const VIDEOS = 6;
const TEST_EVENTS = 8;
/** E2E_VIDEO_SECOND_PRICE (0.02 USD) in micros per second. */
const VIDEO_MICROS_PER_SECOND = 20_000;
// 40 one-word tokens; the echo simulator answers 41 words: 40 x 2 + 41 x 4 = 244 micros at the e2e price.
const PROMPT = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
const CALL_MICROS = 244;

const FEW_CALLS = 'acct_replicas_few_calls';
const JOBS_ACCOUNT = 'acct_replicas_jobs';
const VIDEO_ACCOUNT = 'acct_replicas_videos';
const BATCH_ACCOUNT = 'acct_replicas_batches';

const figures: Figures = {};

/** A call's billing record, once billing has consumed its usage (generous: sixteen processes share two cores). */
async function billed(baseURL: string, key: string, id: string): Promise<{ charged_cost: string }> {
  let record: { charged_cost: string } | undefined;
  await waitFor(`billing record ${id}`, async () => {
    const res = await api(baseURL, 'GET', `/billing/requests/${id}`, { key });
    record = res.body.data;
    return res.status === 200;
  }, 90_000);
  return record!;
}

afterAll(() => reportFigures('replicas', figures));

describe('replicas: two instances of every service (processes: Kafka + MongoDB-wire)', () => {
  const callbacks = useCallbackReceiver('replicas');
  const stack = useStack('processes', {
    replicas: true,
    accounts: [{ id: FEW_CALLS, credit_usd: '0.001' }, { id: JOBS_ACCOUNT, credit_usd: '5' }, { id: VIDEO_ACCOUNT, credit_usd: '5' }, { id: BATCH_ACCOUNT, credit_usd: '5' }],
    env: {
      ...callbacks.env,
      SPEND_OVERDRAFT_ALLOWANCE_USD: ALLOWANCE_USD,
      // The production leases' order of magnitude: a take-over here would be a replica racing a live one.
      ASYNC_CHAT_LEASE_MS: '15000', ASYNC_CHAT_WORKERS: '4', BATCH_LEASE_MS: '15000', VIDEO_LEASE_MS: '15000', WEBHOOKS_LEASE_MS: '15000',
      BATCH_POLL_MS: '200', BATCH_PROGRESS_MS: '200', BATCH_LINE_CONCURRENCY: '4', WEBHOOKS_POLL_MS: '200',
      VIDEO_POLL_MIN_MS: '200', VIDEO_POLL_MAX_MS: '500', VIDEO_CLAIM_POLL_MS: '200',
    },
  });
  const edges = () => [stack.baseURL, stack.secondBaseURL!];
  const edge = (i: number) => edges()[i % 2]!;
  const chat = () => ({ model: E2E_MODEL, messages: [{ role: 'user', content: PROMPT }], max_completion_tokens: 50 });

  test('a key\'s requests per minute hold across both edges under a concurrent burst', async () => {
    const created = await api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name: 'replicas rpm', requests_per_minute: RPM } });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    // One fixed window: the burst must not straddle a minute boundary (it takes a few seconds).
    if (new Date().getUTCSeconds() > 45) await new Promise((r) => setTimeout(r, (61 - new Date().getUTCSeconds()) * 1000));
    const minute = Math.floor(Date.now() / 60_000);
    const responses = await Promise.all(Array.from({ length: RPM_BURST }, (_, i) => api(edge(i), 'POST', '/chat/completions', { key, body: chat() })));
    const sameWindow = Math.floor(Date.now() / 60_000) === minute;
    const admitted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    const unavailable = responses.filter((r) => r.status === 503);
    Object.assign(figures, {
      rpm_limit: RPM, rpm_sent: RPM_BURST, rpm_admitted: admitted.length, rpm_refused: refused.length, rpm_unavailable: unavailable.length, rpm_one_window: sameWindow,
    });
    // An internal call past its deadline on an overloaded machine is a clean 503, never a way past the limit.
    for (const r of unavailable) expectEnvelope(r, 503);
    expect(admitted.length + refused.length + unavailable.length).toBe(RPM_BURST);
    expect(admitted.length).toBeLessThanOrEqual(sameWindow ? RPM : 2 * RPM);
    if (sameWindow && unavailable.length === 0) expect(admitted.length).toBe(RPM);
    expectEnvelope(refused[0]!, 429, 'rate_limit_exceeded');
    // Both edges admitted and refused: the counter is one, not one per edge.
    for (const base of edges()) expect(responses.some((r, i) => edge(i) === base && r.status === 429)).toBe(true);
  });

  test('a key\'s spend limit and an account\'s credit hold across both inference and billing instances', async () => {
    const limited = await api(stack.baseURL, 'POST', '/keys', { key: stack.key, body: { name: 'replicas spend', limit: 0.001 } });
    expect(limited.status).toBe(201);
    const keyOf = { limited: limited.body.key as string, few: stack.accountKeys[FEW_CALLS]! };
    const burst = (key: string) => Promise.all(Array.from({ length: SPEND_BURST }, (_, i) => api(edge(i), 'POST', '/chat/completions', { key, body: chat() })));
    const [byKey, byAccount] = await Promise.all([burst(keyOf.limited), burst(keyOf.few)]);
    const settled = async (key: string, responses: ApiResponse[], code: string) => {
      const admitted = responses.filter((r) => r.status === 200);
      for (const r of admitted) await billed(stack.baseURL, key, r.headers.get('x-request-id')!);
      // Every refusal is the limit's 402, or a clean 503 when an internal call on an overloaded machine passed its
      // deadline (anything else is shown with its message, so a failure says what happened).
      const refusals = responses.filter((r) => r.status !== 200);
      const unexpected = refusals.filter((r) => r.status !== 503 && (r.status !== 402 || r.body?.error?.code !== code));
      expect(unexpected.map((r) => `${r.status} ${r.body?.error?.code}: ${r.body?.error?.message}`)).toEqual([]);
      for (const r of refusals) expectEnvelope(r, r.status, r.status === 402 ? code : undefined);
      return { admitted: admitted.length, unavailable: refusals.filter((r) => r.status === 503).length };
    };
    const { admitted: keyAdmitted, unavailable: keyUnavailable } = await settled(keyOf.limited, byKey, 'key_limit_exceeded');
    const { admitted: accountAdmitted, unavailable: accountUnavailable } = await settled(keyOf.few, byAccount, 'insufficient_balance');
    const keySpent = usdToMicros(String((await api(stack.secondBaseURL!, 'GET', '/key', { key: keyOf.limited })).body.data.usage));
    const accountSpent = usdToMicros('0.001') - await spendableMicros(stack.secondBaseURL!, keyOf.few);
    Object.assign(figures, {
      spend_allowance_micros: usdToMicros(ALLOWANCE_USD),
      key_limit_micros: usdToMicros('0.001'), key_calls_admitted: keyAdmitted, key_calls_sent: SPEND_BURST, key_calls_unavailable: keyUnavailable, key_spent_micros: keySpent,
      account_credit_micros: usdToMicros('0.001'), account_calls_admitted: accountAdmitted, account_calls_sent: SPEND_BURST, account_calls_unavailable: accountUnavailable,
      account_spent_micros: accountSpent,
    });
    for (const [admitted, spent] of [[keyAdmitted, keySpent], [accountAdmitted, accountSpent]] as const) {
      expect(admitted).toBeGreaterThanOrEqual(1);
      expect(admitted).toBeLessThan(SPEND_BURST);
      expect(spent).toBe(admitted * CALL_MICROS);
      expect(spent).toBeLessThanOrEqual(usdToMicros('0.001') + usdToMicros(ALLOWANCE_USD));
    }
  });

  test('async chat jobs, batch lines, video tasks and callbacks, spread over both edges, each run once', async () => {
    const slowCalls = async () => ((await (await fetch(`${stack.slowSimulatorURL.replace(/\/v1$/, '')}${REQUEST_COUNT_PATH}`)).json()) as { requests: number }).requests;
    const slowBefore = await slowCalls();
    const jobsKey = stack.accountKeys[JOBS_ACCOUNT]!;
    const videoKey = stack.accountKeys[VIDEO_ACCOUNT]!;
    const batchKey = stack.accountKeys[BATCH_ACCOUNT]!;
    const [jobsBefore, videosBefore, batchesBefore] = await Promise.all([
      spendableMicros(stack.baseURL, jobsKey), spendableMicros(stack.baseURL, videoKey), spendableMicros(stack.baseURL, batchKey)]);
    // The account's default webhook (signed) takes one batch's callback and the test events.
    const settings = await api(stack.baseURL, 'PUT', '/webhooks/settings', { key: batchKey, body: { url: `${callbacks.receiver.origin}/default-hook`, rotate_secret: true } });
    expect(settings.status).toBe(200);

    const [jobs, batches, videos, testEvents] = await Promise.all([
      runJobs(jobsKey), runBatches(batchKey), runVideos(videoKey),
      Promise.all(Array.from({ length: TEST_EVENTS }, async (_, i) => (await api(edge(i), 'POST', '/webhooks/test', { key: batchKey })).body.data.event_id as string)),
    ]);

    // Callbacks: every one arrived, then a quiet spell longer than the retry back-off (1 s + 3 s) for late duplicates.
    const received = () => callbacks.receiver.received;
    const videoHooks = (id: string) => received().filter((r) => r.path === `/videos/${id}`);
    const batchHooks = (id: string) => received().filter((r) => r.body.includes(`"id":"${id}"`) && (r.path === '/batch-hook' || r.path === '/default-hook'));
    const testHooks = (eventId: string) => received().filter((r) => r.headers['webhook-id'] === eventId);
    const counts = () => [...videos.ids.map((id) => videoHooks(id).length), ...batches.ids.map((id) => batchHooks(id).length), ...testEvents.map((id) => testHooks(id).length)];
    await waitFor('every callback', async () => counts().every((n) => n >= 1), 60_000);
    await new Promise((r) => setTimeout(r, 5_000));
    const delivered = counts();
    expect(delivered).toHaveLength(VIDEOS + 2 + TEST_EVENTS);

    // Money: each account's balance went down by exactly what its calls' records say, once each.
    const spent = async (key: string, before: number) => before - await spendableMicros(stack.baseURL, key);
    const slowDelta = (await slowCalls()) - slowBefore;
    Object.assign(figures, {
      jobs_submitted: JOBS, jobs_completed: jobs.completed, jobs_billed_micros: jobs.chargedMicros, jobs_spent_micros: await spent(jobsKey, jobsBefore),
      batch_lines: 2 * LINES_PER_BATCH, batch_lines_completed: batches.linesCompleted, batches_billed_micros: batches.chargedMicros,
      batches_spent_micros: await spent(batchKey, batchesBefore),
      provider_calls_for_jobs_and_lines: slowDelta, provider_call_duplicates: slowDelta - JOBS - 2 * LINES_PER_BATCH,
      videos_submitted: VIDEOS, videos_completed: videos.completed, videos_expected_micros: videos.expectedMicros, videos_spent_micros: await spent(videoKey, videosBefore),
      callbacks_expected: delivered.length, callbacks_delivered: delivered.filter((n) => n >= 1).length, callback_duplicates: delivered.reduce((sum, n) => sum + Math.max(0, n - 1), 0),
    });
    expect(jobs.completed).toBe(JOBS);
    expect(batches.linesCompleted).toBe(2 * LINES_PER_BATCH);
    expect(videos.completed).toBe(VIDEOS);
    // One provider call per job and per line: none was run twice by two instances.
    expect(slowDelta).toBe(JOBS + 2 * LINES_PER_BATCH);
    expect(figures.jobs_spent_micros).toBe(jobs.chargedMicros);
    expect(figures.batches_spent_micros).toBe(batches.chargedMicros);
    expect(figures.videos_spent_micros).toBe(videos.expectedMicros);
    // The receiver answers 200 at once: no retry, so exactly one delivery each.
    expect(delivered).toEqual(Array(delivered.length).fill(1));
  }, 170_000);

  /** Async chat jobs submitted through both edges and polled through the other one; each billed once. */
  async function runJobs(key: string) {
    const submitted = await Promise.all(Array.from({ length: JOBS }, async (_, i) => {
      const res = await api(edge(i), 'POST', '/async/chat/completions', { key, body: { model: E2E_SLOW_MODEL, messages: [{ role: 'user', content: `job ${i}` }] } });
      expect(res.status).toBe(200);
      return res.body as { id: string; request_id: string };
    }));
    const outcomes = await Promise.all(submitted.map(async (job, i) => {
      let status = '';
      await waitFor(`job ${job.id}`, async () => {
        status = (await api(edge(i + 1), 'GET', `/async/chat/completions/${job.id}`, { key })).body.status;
        return ['completed', 'failed', 'cancelled', 'expired'].includes(status);
      }, 90_000);
      return { status, charged: usdToMicros((await billed(edge(i), key, job.request_id)).charged_cost) };
    }));
    return { completed: outcomes.filter((o) => o.status === 'completed').length, chargedMicros: outcomes.reduce((sum, o) => sum + o.charged, 0) };
  }

  /** Two platform batches of slow lines, one created through each edge (the second calls back to the account default), polled through the other. */
  async function runBatches(key: string) {
    const runs = await Promise.all([0, 1].map(async (e) => {
      const lines = Array.from({ length: LINES_PER_BATCH }, (_, i) => JSON.stringify({
        custom_id: `e${e}-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: E2E_SLOW_MODEL, messages: [{ role: 'user', content: `line ${i}` }] },
      }));
      const form = new FormData();
      form.set('purpose', 'batch');
      form.set('file', new Blob([lines.join('\n')]), 'input.jsonl');
      const uploaded = await fetch(`${edge(e)}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      expect(uploaded.status).toBe(200);
      const fileId = ((await uploaded.json()) as { id: string }).id;
      const hook = e === 0 ? { callback_url: `${callbacks.receiver.origin}/batch-hook` } : {};
      const created = await api(edge(e), 'POST', '/batches', { key: key, body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', execution: 'platform', ...hook } });
      expect(created.status).toBe(200);
      const id: string = created.body.id;
      // Polled through the other edge: the batch lives in the shared store, not in one instance.
      let batch: { status: string; output_file_id: string | null } = { status: '', output_file_id: null };
      await waitFor(`batch ${id}`, async () => {
        batch = (await api(edge(e + 1), 'GET', `/batches/${id}`, { key: key })).body;
        return ['completed', 'failed', 'cancelled', 'expired'].includes(batch.status);
      }, 120_000);
      const output = batch.output_file_id ? (await api(edge(e + 1), 'GET', `/files/${batch.output_file_id}/content`, { key: key })).body as string : '';
      const outputs = output.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { custom_id: string; response: { request_id: string } | null });
      let charged = 0;
      for (const out of outputs) charged += usdToMicros((await billed(edge(e), key, out.response!.request_id)).charged_cost);
      return { id, completed: batch.status === 'completed' ? new Set(outputs.map((o) => o.custom_id)).size : 0, charged };
    }));
    return { ids: runs.map((r) => r.id), linesCompleted: runs.reduce((s, r) => s + r.completed, 0), chargedMicros: runs.reduce((s, r) => s + r.charged, 0) };
  }

  /** Video tasks submitted through both edges, each with a callback path of its own, polled through the other edge. */
  async function runVideos(key: string) {
    const made = await Promise.all(Array.from({ length: VIDEOS }, async (_, i) => {
      const duration = 2 + i;
      const hook = `v${i}-${Date.now()}`;
      const body = { model: E2E_VIDEO_MODEL, prompt: `replica take ${i}`, duration, resolution: '480p', callback_url: `${callbacks.receiver.origin}/videos/${hook}` };
      const res = await api(edge(i), 'POST', '/videos', { key, body });
      expect(res.status).toBe(200);
      return { id: res.body.id as string, duration, hook };
    }));
    const statuses = await Promise.all(made.map(async (video, i) => {
      let status = '';
      await waitFor(`video ${video.id}`, async () => {
        status = (await api(edge(i + 1), 'GET', `/videos/${video.id}`, { key })).body.status;
        return status === 'completed' || status === 'failed';
      }, 90_000);
      await billed(edge(i), key, video.id);
      return status;
    }));
    return { ids: made.map((v) => v.hook), completed: statuses.filter((s) => s === 'completed').length, expectedMicros: made.reduce((s, v) => s + v.duration * VIDEO_MICROS_PER_SECOND, 0) };
  }
});
