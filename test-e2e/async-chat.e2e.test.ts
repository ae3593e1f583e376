import OpenAI from 'openai';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest } from './harness/api';
import { E2E_MODEL, E2E_PRICE, E2E_SLOW_MODEL } from './harness/catalog';
import { waitFor } from './harness/ports';
import { useStack, type StackMode } from './harness/stack';

jest.setTimeout(60_000);

const modes: StackMode[] = ['processes', 'embedded'];

interface ChatJob {
  id: string;
  object: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'expired';
  model: string;
  request_id: string;
  qos: string;
  created_at: number;
  expires_at: number;
  in_progress_at?: number;
  completed_at?: number;
  cancelled_at?: number;
  completion?: OpenAI.ChatCompletion;
  usage?: OpenAI.CompletionUsage;
  error?: { code: string; message: string };
}

const TERMINAL = ['completed', 'failed', 'cancelled', 'expired'];
const REQUEST_ID = /^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function priceOf(usage: { prompt_tokens: number; completion_tokens: number }): number {
  return listCostMicros(deploymentPrice(E2E_PRICE), tokenCounts(usage));
}

describe.each(modes)('async chat jobs through the edge (%s)', (mode) => {
  const stack = useStack(mode);

  const chat = (model: string, content: string) => ({ model, messages: [{ role: 'user' as const, content }] });
  const submit = (body: unknown) => stack.openai.post<ChatJob>('/async/chat/completions', { body });
  const poll = (id: string) => stack.openai.get<ChatJob>(`/async/chat/completions/${id}`);
  const cancel = (id: string) => stack.openai.post<ChatJob>(`/async/chat/completions/${id}/cancel`);

  async function pollUntil(id: string, statuses: string[], timeoutMs = 30_000): Promise<ChatJob> {
    let job: ChatJob | undefined;
    await waitFor(`job ${id} ${statuses.join('|')}`, async () => {
      job = await poll(id);
      return statuses.includes(job.status);
    }, timeoutMs);
    return job!;
  }

  /** Usage events of one account arrive in order: once a later call is billed, an earlier event would be too. */
  async function billAMarkerCall(): Promise<number> {
    const marker = await stack.openai.chat.completions.create(chat(E2E_MODEL, 'marker call'));
    await waitForBilledRequest(stack.baseURL, stack.key, marker._request_id!);
    return priceOf(marker.usage!);
  }

  test('a job is queued at once, completes, and is billed under its request_id like synchronous chat', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const job = await submit({ ...chat(E2E_MODEL, 'hello async gateway'), max_tokens: 50 });
    expect(job).toMatchObject({ object: 'chat.completion.job', status: 'queued', model: E2E_MODEL, qos: 'completion' });
    expect(job.id).toMatch(/^chatjob_/);
    expect(job.request_id).toMatch(REQUEST_ID);
    expect(job.expires_at - job.created_at).toBe(24 * 60 * 60);

    const done = await pollUntil(job.id, TERMINAL);
    expect(done.status).toBe('completed');
    expect(done.completion).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant' }, finish_reason: 'stop' }] });
    expect(done.usage).toEqual(done.completion!.usage);
    expect(done.in_progress_at).toBeGreaterThanOrEqual(job.created_at);
    expect(done.completed_at).toBeGreaterThanOrEqual(done.in_progress_at!);

    const record = await waitForBilledRequest(stack.baseURL, stack.key, job.request_id);
    const charge = priceOf(done.usage!);
    expect(record).toMatchObject({
      request_id: job.request_id, id: done.completion!.id, model: E2E_MODEL, api_type: 'chat', streamed: false,
      usage: { prompt_tokens: done.usage!.prompt_tokens, completion_tokens: done.usage!.completion_tokens },
    });
    expect(usdToMicros(record.charged_cost)).toBe(charge);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - charge);
  });

  test('bad submits are refused in the spec envelope', async () => {
    const body = chat(E2E_MODEL, 'hi');
    const path = '/async/chat/completions';
    expectEnvelope(await api(stack.baseURL, 'POST', path, { key: stack.key, body: { ...body, stream: true } }), 400, 'invalid_request', 'stream');
    expectEnvelope(await api(stack.baseURL, 'POST', path, { key: stack.key, body: { ...body, callback_url: 'https://example.com/hook' } }), 400, undefined, 'callback_url');
    expectEnvelope(await api(stack.baseURL, 'POST', path, { key: stack.key, body: { ...body, max_tokens: 0 } }), 400, undefined, 'max_tokens');
    expectEnvelope(await api(stack.baseURL, 'POST', path, { key: stack.key, body: { ...body, model: 'no/such-model' } }), 404, 'model_not_found', 'model');
    expectEnvelope(await api(stack.baseURL, 'POST', path, { key: stack.brokeKey, body }), 402, 'insufficient_balance');
    expectEnvelope(await api(stack.baseURL, 'POST', path, { body }), 401);
    await expect(submit({ ...body, stream: true })).rejects.toMatchObject({ status: 400 });
  });

  test('a job is visible only to its own account', async () => {
    const job = await submit(chat(E2E_MODEL, 'mine only'));
    expectEnvelope(await api(stack.baseURL, 'GET', `/async/chat/completions/${job.id}`, { key: stack.brokeKey }), 404);
    expectEnvelope(await api(stack.baseURL, 'POST', `/async/chat/completions/${job.id}/cancel`, { key: stack.brokeKey }), 404);
    expectEnvelope(await api(stack.baseURL, 'GET', '/async/chat/completions/chatjob_unknown', { key: stack.key }), 404);
    await pollUntil(job.id, TERMINAL);
    // Settle its charge here, so the balance checks of the next tests see only their own calls.
    await waitForBilledRequest(stack.baseURL, stack.key, job.request_id);
  });

  test('a running job that is cancelled ends cancelled and is never billed', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const job = await submit(chat(E2E_SLOW_MODEL, 'take your time'));
    await pollUntil(job.id, ['in_progress'], 10_000);
    const answer = await cancel(job.id);
    expect(['in_progress', 'cancelled']).toContain(answer.status);
    const final = await pollUntil(job.id, TERMINAL);
    expect(final).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(Number) });
    expect(final.completion).toBeUndefined();

    const markerCharge = await billAMarkerCall();
    expectEnvelope(await api(stack.baseURL, 'GET', `/billing/requests/${job.request_id}`, { key: stack.key }), 404);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - markerCharge);
  });

  test('cancelling a completed job returns it unchanged', async () => {
    const job = await submit(chat(E2E_MODEL, 'finish first'));
    const done = await pollUntil(job.id, TERMINAL);
    expect(done.status).toBe('completed');
    expect(await cancel(job.id)).toEqual(done);
    expect(await poll(job.id)).toEqual(done);
  });

  // Only separate processes can lose one service and keep the rest running.
  if (mode === 'processes') {
    test('a job whose inference process is killed mid-call completes once on a new process', async () => {
      const before = await spendableMicros(stack.baseURL, stack.key);
      const job = await submit(chat(E2E_SLOW_MODEL, 'survive a crash'));
      await pollUntil(job.id, ['in_progress'], 10_000);
      await stack.processes!.kill('inference', 'SIGKILL');
      await stack.processes!.start('inference');

      const done = await pollUntil(job.id, TERMINAL, 45_000);
      expect(done.status).toBe('completed');
      const record = await waitForBilledRequest(stack.baseURL, stack.key, job.request_id);
      const charge = priceOf(done.usage!);
      expect(usdToMicros(record.charged_cost)).toBe(charge);
      const markerCharge = await billAMarkerCall();
      expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before - charge - markerCharge);
    }, 90_000);
  }
});
