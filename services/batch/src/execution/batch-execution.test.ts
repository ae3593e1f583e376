import { batchesCollection } from '../batches/batch-records';
import { ACCOUNT, BatchTestStack, chatLine, NATIVE_FAILING_MODEL, NATIVE_MODEL, uploadForm, waitFor, type BatchEngine, type BatchInstance } from '../test-support';

jest.setTimeout(90_000);

interface OutputLine { custom_id: string; response: { status_code: number; request_id: string; body: { id: string } } | null; error: { code: string } | null }

/**
 * Batches worked by the real service: lines through the inference gRPC API (platform) or the simulator's batch
 * API (provider), billed by the real billing service. An instance stopped mid-batch hands its lease back; the
 * next one resumes from the store.
 */
describe.each<BatchEngine>(['embedded', 'mongo'])('batch execution (%s store)', (engine) => {
  let stack: BatchTestStack;

  beforeAll(async () => { stack = await BatchTestStack.start(engine, { latencyMs: 300 }); });
  afterAll(async () => stack?.close());

  async function createBatch(instance: BatchInstance, lines: string[]) {
    const file = await stack.call(instance, 'POST', '/v1/files', { form: uploadForm(lines.join('\n')) });
    const res = await stack.call(instance, 'POST', '/v1/batches', { body: { input_file_id: file.body.id, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(res.status).toBe(200);
    return res.body;
  }
  const get = (instance: BatchInstance, id: string) => stack.call(instance, 'GET', `/v1/batches/${id}`).then((r) => r.body);
  const content = async (instance: BatchInstance, fileId: string): Promise<OutputLine[]> =>
    (await stack.call(instance, 'GET', `/v1/files/${fileId}/content`)).body.trim().split('\n').map((l: string) => JSON.parse(l));

  /** Every line answered once, each billed once under its request id; the batch's charge is their sum and the balance change. */
  async function expectBilledOnce(instance: BatchInstance, batch: { output_file_id: string; usage_billing: { charged_cost_micros: number } }, count: number, spentBefore: number) {
    const outputs = await content(instance, batch.output_file_id);
    expect(outputs).toHaveLength(count);
    expect(new Set(outputs.map((o) => o.custom_id)).size).toBe(count);
    let sum = 0;
    for (const o of outputs) {
      let charge: number | null = null;
      await waitFor('the line billed', async () => (charge = await stack.charged(o.response!.request_id)) !== null);
      sum += charge!;
    }
    expect(batch.usage_billing.charged_cost_micros).toBe(sum);
    expect(spentBefore - (await stack.spendable())).toBe(sum);
    return outputs;
  }

  it('platform: a batch whose instance stops mid-run is resumed by the next; every line runs upstream once and bills once', async () => {
    const first = await stack.startBatch({ BATCH_LINE_CONCURRENCY: '2', BATCH_SHUTDOWN_GRACE_MS: '0' });
    const [spentBefore, callsBefore] = [await stack.spendable(), stack.simulator.requests];
    const created = await createBatch(first, Array.from({ length: 10 }, (_, i) => chatLine(`l${i}`, `line ${i}`)));
    expect(created).toMatchObject({ status: 'in_progress', execution: 'platform', fallback_from_provider: true, request_counts: { total: 10 } });
    await waitFor('two lines answered', async () => (await get(first, created.id)).request_counts.completed >= 2);
    // Lines are in flight at inference as the instance goes: it hands its lease back without waiting for them.
    await first.stop();
    expect((await batchesCollection(stack.batchStore).findOne({ _id: created.id }))!.status).toBe('in_progress');

    const second = await stack.startBatch({ BATCH_LINE_CONCURRENCY: '4' });
    await waitFor('the batch completed', async () => (await get(second, created.id)).status === 'completed');
    const done = await get(second, created.id);
    expect(done).toMatchObject({ request_counts: { total: 10, completed: 10, failed: 0 }, error_file_id: null, completed_at: expect.any(Number) });
    expect(stack.simulator.requests - callsBefore).toBe(10);
    await expectBilledOnce(second, done, 10, spentBefore);
    await second.stop();
  });

  it('platform: lines wait while inference cannot be reached (never recorded as failed), and run once it can', async () => {
    const blind = await stack.startBatch({ INFERENCE_GRPC_ADDR: '127.0.0.1:1', BATCH_SHUTDOWN_GRACE_MS: '0' });
    const created = await createBatch(blind, [chatLine('w0', 'wait'), chatLine('w1', 'wait')]);
    await waitFor('the lines tried', async () => (await batchesCollection(stack.batchStore).findOne({ _id: created.id }))!.lines_prepared);
    // Showing that nothing happens needs time to pass: several retries of both lines fit in it.
    await new Promise((r) => setTimeout(r, 500));
    expect((await get(blind, created.id)).request_counts).toEqual({ total: 2, completed: 0, failed: 0 });
    await blind.stop();
    const seeing = await stack.startBatch();
    await waitFor('the batch completed', async () => (await get(seeing, created.id)).status === 'completed');
    expect((await get(seeing, created.id)).request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    await seeing.stop();
  });

  it('provider: a batch the provider fails as a whole ends failed with the upstream error, its lines in the error file, nothing billed', async () => {
    const instance = await stack.startBatch();
    const spentBefore = await stack.spendable();
    const created = await createBatch(instance, [chatLine('f0', 'x', NATIVE_FAILING_MODEL), chatLine('f1', 'y', NATIVE_FAILING_MODEL)]);
    await waitFor('the batch failed', async () => (await get(instance, created.id)).status === 'failed');
    const done = await get(instance, created.id);
    expect(done).toMatchObject({ failed_at: expect.any(Number), output_file_id: null, request_counts: { total: 2, completed: 0, failed: 2 } });
    expect(done.errors).toMatchObject({ type: 'upstream_error', stage: 'in_progress', code: expect.any(String), message: expect.any(String) });
    expect((await content(instance, done.error_file_id)).map((l) => l.custom_id).sort()).toEqual(['f0', 'f1']);
    expect(await stack.spendable()).toBe(spentBefore);
    await instance.stop();
  });

  it('provider: a results file cut short ends the reading there: the lines read are answered and billed, the rest fail with the upstream error', async () => {
    const instance = await stack.startBatch();
    const spentBefore = await stack.spendable();
    const created = await createBatch(instance, [
      chatLine('r0', 'native first', NATIVE_MODEL), chatLine('r1', 'sim-broken-result here', NATIVE_MODEL), chatLine('r2', 'native last', NATIVE_MODEL),
    ]);
    expect(created).toMatchObject({ execution: 'provider' });
    await waitFor('the batch completed', async () => (await get(instance, created.id)).status === 'completed');
    const done = await get(instance, created.id);
    expect(done).toMatchObject({ request_counts: { total: 3, completed: 1, failed: 2 } });
    const outputs = await expectBilledOnce(instance, done, 1, spentBefore);
    expect(outputs.map((o) => o.custom_id)).toEqual(['r0']);
    const failed = await content(instance, done.error_file_id);
    expect(failed.map((l) => [l.custom_id, l.error?.code]).sort()).toEqual([['r1', 'upstream_error'], ['r2', 'upstream_error']]);
    expect((failed[0]!.error as { message?: string }).message).toBe('The provider sent a malformed batch result line');
    await instance.stop();
  });

  it('provider: an instance that stops after submitting leaves the upstream batch to the next, which finishes it without submitting again', async () => {
    // Polls rarely: the first instance submits and polls once, then is stopped while it waits.
    const first = await stack.startBatch({ BATCH_PROVIDER_POLL_MS: '60000', BATCH_SHUTDOWN_GRACE_MS: '0' });
    const spentBefore = await stack.spendable();
    const created = await createBatch(first, Array.from({ length: 4 }, (_, i) => chatLine(`p${i}`, `native ${i}`, NATIVE_MODEL)));
    expect(created).toMatchObject({ execution: 'provider', fallback_from_provider: false, execution_preference: 'auto' });
    const batches = batchesCollection(stack.batchStore);
    await waitFor('the upstream batch submitted', async () => (await batches.findOne({ _id: created.id }))?.provider_handle_json != null);
    const handle = (await batches.findOne({ _id: created.id }))!.provider_handle_json;
    await first.stop();

    const second = await stack.startBatch();
    await waitFor('the batch completed', async () => (await get(second, created.id)).status === 'completed');
    const done = await get(second, created.id);
    expect(done).toMatchObject({ request_counts: { total: 4, completed: 4, failed: 0 } });
    expect((await batches.findOne({ _id: created.id }))!.provider_handle_json).toBe(handle);
    const outputs = await expectBilledOnce(second, done, 4, spentBefore);
    // Billed at the batch price: half the list price of the same tokens (1 and 2 micros per token at list).
    for (const o of outputs) {
      const body = o.response!.body as unknown as { usage: { prompt_tokens: number; completion_tokens: number } };
      expect(await stack.charged(o.response!.request_id, ACCOUNT)).toBe(Math.ceil(body.usage.prompt_tokens * 0.5) + body.usage.completion_tokens);
    }
    await second.stop();
  });
});
