import { createHmac } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { Webhook } from 'standardwebhooks';
import { usdToMicros } from '@gw/platform';
import { REQUEST_COUNT_PATH } from '@gw/simulators';
import { api, expectEnvelope, spendableMicros, waitForBilledRequest } from './harness/api';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import {
  E2E_BATCH_ANTHROPIC_MODEL, E2E_BATCH_EXPIRE_ANTHROPIC_MODEL, E2E_BATCH_EXPIRE_OPENAI_MODEL, E2E_BATCH_OPENAI_MODEL, E2E_BATCH_PRICE, E2E_MODEL,
  E2E_NO_BATCH_MODEL, E2E_SLOW_MODEL,
} from './harness/catalog';
import { waitFor } from './harness/ports';
import { useCallbackReceiver } from './harness/callback-receiver';
import { useStack, type TestStack } from './harness/stack';

jest.setTimeout(120_000);

const REQUEST_ID = /^br-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const OTHER_ACCOUNT = 'acct_batch_other';
/** Small limits, so refusing them costs no big upload. */
const LIMITS = {
  FILE_MAX_LINES: '200', FILE_MAX_BYTES: String(256 * 1024), BATCH_LINE_MAX_BYTES: '4096', BATCH_PROGRESS_MS: '200', BATCH_POLL_MS: '200',
  // The simulated provider batches move one step per poll.
  BATCH_PROVIDER_POLL_MS: '500',
};

type Batch = OpenAI.Batch & {
  execution: string; execution_preference: string; fallback_from_provider: boolean; client_model: string | null;
  usage_billing: { list_cost: string; charged_cost: string; charged_cost_micros: number; list_cost_micros: number } | null;
  errors: (OpenAI.Batch['errors'] & { message: string; code: string; type: string; stage: string }) | null;
};
interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: any } | null; // eslint-disable-line @typescript-eslint/no-explicit-any
  error: { code: string; message: string } | null;
}

const line = (customId: string, content: string, model = E2E_MODEL, extra: object = {}) =>
  ({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content }], ...extra } });
const jsonl = (lines: unknown[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');

async function upload(client: OpenAI, content: string): Promise<OpenAI.FileObject> {
  return client.files.create({ file: await toFile(Buffer.from(content), 'input.jsonl'), purpose: 'batch' });
}

async function createBatch(client: OpenAI, inputFileId: string, extra: Record<string, unknown> = {}): Promise<Batch> {
  const params = { input_file_id: inputFileId, endpoint: '/v1/chat/completions' as const, completion_window: '24h' as const, ...extra };
  return (await client.batches.create(params)) as Batch;
}

async function pollUntil(client: OpenAI, id: string, statuses: string[], timeoutMs = 90_000): Promise<Batch> {
  let batch: Batch | undefined;
  await waitFor(`batch ${id} ${statuses.join('|')}`, async () => {
    batch = (await client.batches.retrieve(id)) as Batch;
    return statuses.includes(batch.status);
  }, timeoutMs);
  return batch!;
}

async function fileLines(client: OpenAI, fileId: string): Promise<OutputLine[]> {
  const text = await (await client.files.content(fileId)).text();
  return text.trim().split('\n').map((l) => JSON.parse(l) as OutputLine);
}

/** Every answered line billed once under its own request id: the billing records sum to the batch's charge. */
async function expectBilledLineByLine(stack: TestStack, batch: Batch, outputs: OutputLine[], model = E2E_MODEL): Promise<number> {
  let charged = 0;
  let list = 0;
  for (const out of outputs) {
    const record = await waitForBilledRequest(stack.baseURL, stack.key, out.response!.request_id);
    expect(record).toMatchObject({ request_id: out.response!.request_id, model, id: out.response!.body.id });
    charged += usdToMicros(record.charged_cost);
    list += usdToMicros(record.list_cost);
  }
  expect(batch.usage_billing).toMatchObject({ charged_cost_micros: charged, list_cost_micros: list });
  expect(usdToMicros(batch.usage_billing!.charged_cost)).toBe(charged);
  return charged;
}

describe('batches and files through the edge (embedded)', () => {
  const stack = useStack('embedded', { env: LIMITS, accounts: [{ id: OTHER_ACCOUNT, credit_usd: '5' }] });
  const other = () => new OpenAI({ apiKey: stack.accountKeys[OTHER_ACCOUNT], baseURL: stack.baseURL, maxRetries: 0 });

  it('runs a batch on the platform: output and error files, counts, and money add up line by line', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const lines = [
      ...Array.from({ length: 6 }, (_, i) => line(`ok-${i}`, `hello batch line ${i}`)),
      // Inference refuses it as it would over HTTP: an error line, no charge.
      line('bad-temperature', 'too hot', E2E_MODEL, { temperature: 7 }),
    ];
    const file = await upload(stack.openai, jsonl(lines));
    expect(file).toMatchObject({ id: expect.stringMatching(/^file-/), object: 'file', purpose: 'batch', filename: 'input.jsonl', bytes: jsonl(lines).length });
    const created = await createBatch(stack.openai, file.id, { metadata: { team: 'e2e' } });
    expect(created).toMatchObject({
      id: expect.stringMatching(/^batch_/), object: 'batch', endpoint: '/v1/chat/completions', completion_window: '24h', input_file_id: file.id,
      execution_preference: 'auto', execution: 'platform', fallback_from_provider: true, client_model: E2E_MODEL, metadata: { team: 'e2e' },
      request_counts: { total: 7, completed: 0, failed: 0 }, errors: null,
    });
    expect(created.expires_at).toBe(created.created_at + 24 * 3600);

    const done = await pollUntil(stack.openai, created.id, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 7, completed: 6, failed: 1 }, completed_at: expect.any(Number) });
    const outputs = await fileLines(stack.openai, done.output_file_id!);
    expect(outputs.map((o) => o.custom_id).sort()).toEqual(['ok-0', 'ok-1', 'ok-2', 'ok-3', 'ok-4', 'ok-5']);
    for (const out of outputs) {
      expect(out).toMatchObject({ id: expect.stringMatching(/^batch_req_/), error: null, response: { status_code: 200, request_id: expect.stringMatching(REQUEST_ID) } });
      expect(out.response!.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant' } }] });
    }
    const errors = await fileLines(stack.openai, done.error_file_id!);
    expect(errors).toEqual([{
      id: expect.stringMatching(/^batch_req_/), custom_id: 'bad-temperature',
      response: { status_code: 400, request_id: expect.stringMatching(REQUEST_ID), body: expect.objectContaining({ code: '400' }) },
      error: { code: expect.any(String), message: expect.stringContaining('temperature') },
    }]);

    const charged = await expectBilledLineByLine(stack, done, outputs);
    expect(charged).toBeGreaterThan(0);
    expect(before - (await spendableMicros(stack.baseURL, stack.key))).toBe(charged);

    const outFile = await stack.openai.files.retrieve(done.output_file_id!);
    expect(outFile).toMatchObject({ object: 'file', purpose: 'batch_output' });
    const listed = await api(stack.baseURL, 'GET', '/batches?limit=1', { key: stack.key });
    expect(listed.body).toMatchObject({ object: 'list', data: [{ id: created.id }], first_id: created.id, last_id: created.id });
  });

  it.each([
    ['not JSON', jsonl([line('a', 'x'), '{not json']), 'invalid_json'],
    ['mixed models', jsonl([line('a', 'x'), line('b', 'y', E2E_SLOW_MODEL)]), 'mixed_models'],
    ['a duplicate custom_id', jsonl([line('a', 'x'), line('a', 'y')]), 'duplicate_custom_id'],
    ['a wrong url', jsonl([line('a', 'x'), { ...line('b', 'y'), url: '/v1/embeddings' }]), 'invalid_url'],
    ['a request field beside body', jsonl([line('a', 'x'), { ...line('b', 'y'), temperature: 0 }]), 'unknown_parameter'],
    ['a body nested past the JSON bound', jsonl([line('a', 'x'), line('b', 'y', E2E_MODEL, { metadata: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) })]), 'invalid_body'],
    ['a line over the size limit', jsonl([line('a', 'x'), line('b', 'y'.repeat(5000))]), 'line_too_large'],
    ['a model batches may not use', jsonl([line('a', 'x', E2E_NO_BATCH_MODEL)]), 'model_not_batch_capable'],
  ])('a file with %s fails at validation with errors, and runs nothing', async (_what, content, code) => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const created = await createBatch(stack.openai, (await upload(stack.openai, content)).id);
    expect(created).toMatchObject({ status: 'failed', failed_at: expect.any(Number), output_file_id: null });
    expect(created.errors).toMatchObject({ code, type: 'invalid_request_error', stage: 'validating', message: expect.any(String) });
    expect(await stack.openai.batches.retrieve(created.id)).toMatchObject({ status: 'failed', errors: { code } });
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before);
  });

  it.each([
    'http://example.com/hook', 'https://127.0.0.1/hook', 'https://2130706433/hook', 'https://0177.0.0.1/hook', 'https://0x7f.0.0.1/hook',
    'https://127.1/hook', 'https://[::1]/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://10.0.0.8/hook', 'https://192.168.1.1/hook',
    'https://169.254.169.254/latest', 'https://[fe80::1]/hook', 'https://localhost/hook', 'not a url',
  ])('refuses the callback address %s with a 400 naming callback_url', async (url) => {
    const file = await upload(stack.openai, jsonl([line('a', 'x')]));
    const res = await api(stack.baseURL, 'POST', '/batches', {
      key: stack.key, body: { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', callback_url: url },
    });
    expectEnvelope(res, 400, undefined, 'callback_url');
  });

  it.each([
    ['endpoint', { endpoint: '/v1/embeddings' }],
    ['completion_window', { completion_window: '1h' }],
    ['execution', { execution: 'fastest' }],
    ['execution', { execution: 'provider' }],
    ['metadata', { metadata: 'x' }],
    ['input_file_id', { input_file_id: 'file-missing' }],
    // OpenAI's output expiry the gateway does not honour, and a misspelt field: refused, never ignored.
    ['output_expires_after', { output_expires_after: { anchor: 'created_at', seconds: 3600 } }],
    ['callbackurl', { callbackurl: 'https://hooks.example.com/x' }],
  ])('refuses a bad %s with a 4xx naming it', async (param, override) => {
    const file = await upload(stack.openai, jsonl([line('a', 'x')]));
    const res = await api(stack.baseURL, 'POST', '/batches', {
      key: stack.key, body: { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', ...override },
    });
    expectEnvelope(res, param === 'input_file_id' ? 404 : 400, undefined, param);
  });

  it('lists the batch models from the catalogue', async () => {
    const res = await api(stack.baseURL, 'GET', '/batches/models', { key: stack.key });
    expect(res.status).toBe(200);
    const byId = new Map((res.body.data as { id: string }[]).map((m) => [m.id, m]));
    expect(byId.get(E2E_MODEL)).toMatchObject({ object: 'model', supports_batch: true, supports_provider_batch: false, model_type: 'LLM' });
    expect(byId.get(E2E_BATCH_OPENAI_MODEL)).toMatchObject({ supports_provider_batch: true });
    expect(byId.has(E2E_NO_BATCH_MODEL)).toBe(false);
  });

  it('files: upload limits are 400s naming the param; list, get, content and delete are the account\'s own', async () => {
    const tooMany = Array.from({ length: 201 }, (_, i) => line(`l${i}`, 'x'));
    await expect(upload(stack.openai, jsonl(tooMany))).rejects.toMatchObject({ status: 400, error: { param: 'file', code: 'too_many_lines' } });
    await expect(upload(stack.openai, 'x'.repeat(256 * 1024 + 1))).rejects.toMatchObject({ status: 400, error: { param: 'file', code: 'file_too_large' } });
    await expect(stack.openai.files.create({ file: await toFile(Buffer.from('{}'), 'a.jsonl'), purpose: 'fine-tune' }))
      .rejects.toMatchObject({ status: 400, error: { param: 'purpose' } });

    const file = await upload(stack.openai, jsonl([line('a', 'mine')]));
    expect(await (await stack.openai.files.content(file.id)).text()).toBe(jsonl([line('a', 'mine')]));
    const page = await api(stack.baseURL, 'GET', '/files?limit=1', { key: stack.key });
    expect(page.body).toMatchObject({ object: 'list', data: [{ id: file.id }], first_id: file.id, last_id: file.id, has_more: true });
    const next = await api(stack.baseURL, 'GET', `/files?limit=100&after=${file.id}`, { key: stack.key });
    expect(next.body.data.map((f: { id: string }) => f.id)).not.toContain(file.id);

    // Another account sees none of it.
    await expect(other().files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(other().files.content(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(other().files.delete(file.id)).rejects.toMatchObject({ status: 404 });
    expect((await other().files.list()).data.map((f) => f.id)).not.toContain(file.id);
    await expect(createBatch(other(), file.id)).rejects.toMatchObject({ status: 404, error: { param: 'input_file_id' } });

    expect(await stack.openai.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    await expect(stack.openai.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it.each([E2E_BATCH_OPENAI_MODEL, E2E_BATCH_ANTHROPIC_MODEL])('auto with a native route runs on the provider batch API (%s), each line billed once at the batch price', async (model) => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const ids = Array.from({ length: 5 }, (_, i) => `p-${i}`);
    const created = await createBatch(stack.openai, (await upload(stack.openai, jsonl(ids.map((id) => line(id, `provider line ${id}`, model))))).id);
    expect(created).toMatchObject({ execution_preference: 'auto', execution: 'provider', fallback_from_provider: false, client_model: model });
    const done = await pollUntil(stack.openai, created.id, ['completed', 'failed', 'expired']);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 5, completed: 5, failed: 0 }, error_file_id: null });
    const outputs = await fileLines(stack.openai, done.output_file_id!);
    expect(outputs.map((o) => o.custom_id).sort()).toEqual(ids);
    let charged = 0;
    for (const out of outputs) {
      expect(out).toMatchObject({ response: { status_code: 200, request_id: expect.stringMatching(REQUEST_ID), body: { object: 'chat.completion', model } }, error: null });
      const record = await waitForBilledRequest(stack.baseURL, stack.key, out.response!.request_id);
      expect(record).toMatchObject({ api_type: 'batch', model });
      expect(usdToMicros(record.list_cost)).toBe(listCostMicros(deploymentPrice(E2E_BATCH_PRICE), tokenCounts(record.usage)));
      charged += usdToMicros(record.charged_cost);
    }
    expect(done.usage_billing).toMatchObject({ charged_cost_micros: charged });
    expect(before - (await spendableMicros(stack.baseURL, stack.key))).toBe(charged);
  });

  it.each([E2E_BATCH_EXPIRE_OPENAI_MODEL, E2E_BATCH_EXPIRE_ANTHROPIC_MODEL])('a provider batch that expires upstream (%s) ends expired: answered lines billed, the rest batch_expired', async (model) => {
    const ids = Array.from({ length: 4 }, (_, i) => `e-${i}`);
    const created = await createBatch(stack.openai, (await upload(stack.openai, jsonl(ids.map((id) => line(id, id, model))))).id, { execution: 'provider' });
    const done = await pollUntil(stack.openai, created.id, ['completed', 'failed', 'expired']);
    expect(done).toMatchObject({ status: 'expired', expired_at: expect.any(Number), request_counts: { total: 4, completed: 2, failed: 2 } });
    const expired = await fileLines(stack.openai, done.error_file_id!);
    expect(expired.map((e) => e.error?.code)).toEqual(['batch_expired', 'batch_expired']);
    const outputs = await fileLines(stack.openai, done.output_file_id!);
    expect(outputs).toHaveLength(2);
    let charged = 0;
    for (const out of outputs) charged += usdToMicros((await waitForBilledRequest(stack.baseURL, stack.key, out.response!.request_id)).charged_cost);
    expect(done.usage_billing).toMatchObject({ charged_cost_micros: charged });
  });

  it('cancelling a provider batch cancels it upstream: cancelled, every line batch_cancelled, nothing billed', async () => {
    const before = await spendableMicros(stack.baseURL, stack.key);
    const created = await createBatch(stack.openai, (await upload(stack.openai, jsonl([line('c-0', 'x', E2E_BATCH_OPENAI_MODEL), line('c-1', 'y', E2E_BATCH_OPENAI_MODEL)]))).id);
    expect(created.execution).toBe('provider');
    await stack.openai.batches.cancel(created.id);
    const done = await pollUntil(stack.openai, created.id, ['cancelled', 'completed']);
    expect(done).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(Number), request_counts: { total: 2, completed: 0, failed: 2 } });
    expect((await fileLines(stack.openai, done.error_file_id!)).map((e) => e.error?.code)).toEqual(['batch_cancelled', 'batch_cancelled']);
    expect(await spendableMicros(stack.baseURL, stack.key)).toBe(before);
  });

  it('cancel: in flight -> cancelling -> cancelled with cancelled_at; lines never sent are batch_cancelled; terminal stays unchanged', async () => {
    const lines = Array.from({ length: 24 }, (_, i) => line(`slow-${i}`, `slow ${i}`, E2E_SLOW_MODEL));
    const created = await createBatch(stack.openai, (await upload(stack.openai, jsonl(lines))).id);
    await waitFor('a first line answered', async () => ((await stack.openai.batches.retrieve(created.id)).request_counts?.completed ?? 0) > 0, 60_000);
    const cancelling = await stack.openai.batches.cancel(created.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);
    expect(Object.keys(cancelling).sort()).toEqual([
      'cancelled_at', 'completion_window', 'created_at', 'endpoint', 'error_file_id', 'execution', 'expires_at', 'id', 'input_file_id',
      'metadata', 'object', 'output_file_id', 'request_counts', 'status', 'usage_billing',
    ]);
    const cancelled = await pollUntil(stack.openai, created.id, ['cancelled']);
    expect(cancelled.cancelled_at).toEqual(expect.any(Number));
    const { completed, failed, total } = cancelled.request_counts!;
    expect(total).toBe(24);
    expect(completed + failed).toBe(24);
    expect(completed).toBeLessThan(24);
    const errors = await fileLines(stack.openai, cancelled.error_file_id!);
    expect(errors).toHaveLength(failed);
    expect(errors.every((e) => e.error?.code === 'batch_cancelled' && e.response === null)).toBe(true);
    const outputs = await fileLines(stack.openai, cancelled.output_file_id!);
    await expectBilledLineByLine(stack, cancelled, outputs, E2E_SLOW_MODEL);

    const again = await stack.openai.batches.cancel(created.id);
    expect(again).toMatchObject({ status: 'cancelled', cancelled_at: cancelled.cancelled_at });
    await expect(other().batches.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(other().batches.cancel(created.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('batches on Kafka + MongoDB-wire, two batch processes (processes)', () => {
  // A callback receiver on loopback over TLS (the batch service's guard allows loopback too).
  const callbacks = useCallbackReceiver('batch');
  const stack = useStack('processes', {
    env: { ...LIMITS, BATCH_LEASE_MS: '3000', BATCH_LINE_CONCURRENCY: '4', ...callbacks.env },
    secondBatch: true,
  });

  /** Provider calls the slow simulator (which only these batches use) has received. */
  const slowCalls = async () => {
    const res = await fetch(`${stack.slowSimulatorURL.replace(/\/v1$/, '')}${REQUEST_COUNT_PATH}`);
    return ((await res.json()) as { requests: number }).requests;
  };

  /**
   * Each line answered once upstream and billed once: the simulator saw one call per line, and the billed call
   * is the one whose answer is in the file.
   */
  async function expectEachLineOnce(batch: Batch, customIds: string[], before: number, callsBefore: number) {
    expect(await slowCalls()).toBe(callsBefore + customIds.length);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: customIds.length, completed: customIds.length, failed: 0 }, error_file_id: null });
    const outputs = await fileLines(stack.openai, batch.output_file_id!);
    expect(outputs.map((o) => o.custom_id).sort()).toEqual([...customIds].sort());
    expect(new Set(outputs.map((o) => o.response!.request_id)).size).toBe(customIds.length);
    const charged = await expectBilledLineByLine(stack, batch, outputs, E2E_SLOW_MODEL);
    expect(before - (await spendableMicros(stack.baseURL, stack.key))).toBe(charged);
  }

  it('two batch instances on one batch: each line runs and bills once', async () => {
    const [before, callsBefore] = [await spendableMicros(stack.baseURL, stack.key), await slowCalls()];
    const ids = Array.from({ length: 12 }, (_, i) => `two-${i}`);
    const created = await createBatch(stack.openai, (await upload(stack.openai, jsonl(ids.map((id) => line(id, id, E2E_SLOW_MODEL))))).id);
    await expectEachLineOnce(await pollUntil(stack.openai, created.id, ['completed', 'failed']), ids, before, callsBefore);
  });

  it('kill -9 of the batch processes mid-batch: after restart the batch completes, no line runs or bills twice', async () => {
    const [before, callsBefore] = [await spendableMicros(stack.baseURL, stack.key), await slowCalls()];
    const ids = Array.from({ length: 16 }, (_, i) => `kill-${i}`);
    const created = await createBatch(stack.openai, (await upload(stack.openai, jsonl(ids.map((id) => line(id, id, E2E_SLOW_MODEL))))).id,
      { callback_url: `${callbacks.receiver.origin}/batch-hook` });
    await waitFor('some lines answered', async () => ((await stack.openai.batches.retrieve(created.id)).request_counts?.completed ?? 0) >= 4, 60_000);
    // Lines are in flight at inference now: their answers arrive after the batch processes are gone.
    await Promise.all([stack.processes!.kill('batch'), stack.processes!.kill('batch-2')]);
    await stack.processes!.start('batch');
    await stack.processes!.start('batch-2');
    const done = await pollUntil(stack.openai, created.id, ['completed', 'failed'], 120_000);
    await expectEachLineOnce(done, ids, before, callsBefore);

    // One callback for the terminal state, with the Batch fields, though both batch processes died on the way.
    // The account has no signing secret: the callback is unsigned (no webhook-id header), so it is told by its body.
    const delivered = () => callbacks.receiver.received.filter((r) => r.body.includes(created.id));
    await waitFor('the batch callback', async () => delivered().length > 0, 30_000);
    expect(delivered()).toHaveLength(1);
    expect(JSON.parse(delivered()[0].body)).toMatchObject({
      event: 'batch.completed', id: created.id, status: 'completed', execution: 'platform', execution_preference: 'auto', fallback_from_provider: true,
      request_counts: done.request_counts, output_file_id: done.output_file_id, usage_billing: done.usage_billing,
    });
  });

  it('the account\'s default webhook gets one signed callback; the webhooks service killed mid-batch and a receiver failing twice: exactly 3 attempts', async () => {
    const put = await api(stack.baseURL, 'PUT', '/webhooks/settings', { key: stack.key, body: { url: `${callbacks.receiver.origin}/default-hook`, rotate_secret: true } });
    expect(put.status).toBe(200);
    const secret: string = put.body.data.secret;
    const ids = Array.from({ length: 8 }, (_, i) => `signed-${i}`);
    const created = await createBatch(stack.openai, (await upload(stack.openai, jsonl(ids.map((id) => line(id, id, E2E_SLOW_MODEL))))).id);
    const attempts = () => callbacks.receiver.received.filter((r) => r.path === '/default-hook' && r.body.includes(created.id));
    callbacks.receiver.answer((req, res) => { res.writeHead(req.path === '/default-hook' && attempts().length <= 2 ? 503 : 200).end(); });
    await waitFor('some lines answered', async () => ((await stack.openai.batches.retrieve(created.id)).request_counts?.completed ?? 0) >= 2, 60_000);
    await stack.processes!.kill('webhooks');
    await stack.processes!.start('webhooks');
    const done = await pollUntil(stack.openai, created.id, ['completed', 'failed'], 120_000);
    expect(done.status).toBe('completed');

    await waitFor('three attempts', async () => attempts().length >= 3, 60_000);
    await new Promise((r) => setTimeout(r, 4_000));
    const got = attempts();
    expect(got).toHaveLength(3);
    // 1 s, then 3 s between attempts (lower bounds: a busy machine only adds to them).
    expect(got[1].atMs - got[0].atMs).toBeGreaterThanOrEqual(900);
    expect(got[2].atMs - got[1].atMs).toBeGreaterThanOrEqual(2_900);
    // The same event each time, signed in both schemes over the exact bytes received.
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(1);
    const last = got[2];
    expect(JSON.parse(last.body)).toMatchObject({ event: 'batch.completed', id: created.id, status: 'completed', usage_billing: done.usage_billing });
    expect(new Webhook(secret).verify(last.body, last.headers as Record<string, string>)).toMatchObject({ id: created.id });
    const ts = String(last.headers['svc-timestamp']);
    expect(last.headers['svc-signature']).toBe(`sha256=${createHmac('sha256', secret).update(`${ts}.${last.body}`).digest('hex')}`);
  });
});
