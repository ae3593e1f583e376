import { GatewayError, InputError } from '@gw/platform';
import {
  isRetryableUpstreamError, isTerminalNativeBatchStatus, type ChatTarget, type NativeBatchHandle, type NativeBatchLine, type NativeBatchLineResult,
  type NativeBatchProvider, type NativeBatchState,
} from '@gw/provider-spec';
import { SNAPSHOT_SUFFIX, startSimulators, type RunningSimulator } from '../../simulators/src';
import { createNativeBatchProvider } from './create-native-batch-provider';

/**
 * Every batch adapter against the simulator of its wire format: the same batches, the same expectations.
 * The simulated batches move one step per poll (see the simulators' batch routes), so nothing here waits on time.
 */
const FORMATS = [
  { kind: 'openai-compatible', providerModel: 'gpt-4o-mini', unsupported: { top_k: 3 }, unsupportedParam: 'top_k', listPath: '/v1/batches' },
  { kind: 'anthropic', providerModel: 'claude-echo', unsupported: { seed: 7 }, unsupportedParam: 'seed', listPath: '/v1/messages/batches' },
];

const line = (key: string, text: string, extra: object = {}): NativeBatchLine => ({
  custom_id: key,
  request: { model: 'public/model', messages: [{ role: 'user', content: text }], ...extra },
});

async function collect(results: AsyncIterable<NativeBatchLineResult>): Promise<Map<string, NativeBatchLineResult>> {
  const byKey = new Map<string, NativeBatchLineResult>();
  for await (const result of results) byKey.set(result.custom_id, result);
  return byKey;
}

async function thrown(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe.each(FORMATS)('native batches of $kind', ({ kind, providerModel, unsupported, unsupportedParam, listPath }) => {
  let sim: RunningSimulator;
  let provider: NativeBatchProvider;
  let target: ChatTarget;
  const withModel = (model: string): ChatTarget => ({ ...target, providerModel: model });

  beforeAll(async () => {
    sim = await startSimulators();
    provider = createNativeBatchProvider(kind);
    target = { baseUrl: `${sim.url}/v1`, apiKey: 'sk-sim', providerModel, timeoutMs: 5_000 };
  });
  afterAll(async () => {
    await provider.close?.();
    await sim.close();
  });

  async function upstreamBatchCount(): Promise<number> {
    const res = await fetch(`${sim.url}${listPath}`, { headers: { authorization: 'Bearer sk-sim', 'x-api-key': 'sk-sim', 'anthropic-version': '2023-06-01' } });
    return ((await res.json()) as { data: unknown[] }).data.length;
  }

  /** Polls until the batch is terminal; the simulated batch moves one step per poll. */
  async function pollToEnd(handle: NativeBatchHandle, t = target): Promise<NativeBatchState[]> {
    const seen: NativeBatchState[] = [];
    for (let i = 0; i < 10; i++) {
      const state = await provider.poll(handle, t);
      seen.push(state);
      if (isTerminalNativeBatchStatus(state.status)) return seen;
    }
    throw new Error(`batch ${handle.id} did not end: ${JSON.stringify(seen.at(-1))}`);
  }

  it('runs a batch to completed and maps every line back, per-line errors included', async () => {
    const handle = await provider.submit(
      [line('line-1', 'hello big world'), line('line-2', 'sim-error-400 refuse me'), line('line-3', 'one two', { max_tokens: 2 })],
      target,
      { gatewayBatchId: 'batch_gw1', idempotencyKey: 'submit-1' },
    );
    expect(handle.id).toEqual(expect.any(String));
    expect(JSON.parse(JSON.stringify(handle))).toEqual(handle);

    const states = await pollToEnd(handle);
    expect(states.slice(0, -1).every((s) => s.status === 'in_progress' && !s.hasResults)).toBe(true);
    expect(states.at(-1)).toMatchObject({ status: 'completed', hasResults: true, error: null, counts: { total: 3, succeeded: 2, failed: 1 } });

    const results = await collect(provider.results(handle, target));
    expect(results.size).toBe(3);
    expect(results.get('line-1')).toMatchObject({
      outcome: 'succeeded',
      completion: { object: 'chat.completion', model: `${providerModel}${SNAPSHOT_SUFFIX}`, choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello big world' }, finish_reason: 'stop' }] },
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, provider_request_id: expect.any(String) },
      providerResponseId: expect.any(String),
    });
    expect(results.get('line-3')).toMatchObject({ outcome: 'succeeded', completion: { choices: [{ message: { content: 'Echo: one' }, finish_reason: 'length' }] } });
    expect(results.get('line-2')).toMatchObject({ outcome: 'errored', error: { upstreamStatus: 400, message: expect.any(String), code: expect.any(String) } });

    // Results can be read again from the start (after a restart), and a reader may stop early.
    for await (const first of provider.results(handle, target)) {
      expect(first.custom_id).toMatch(/^line-/);
      break;
    }
    expect((await collect(provider.results(handle, target))).size).toBe(3);
  });

  it('streams a large batch from an async source and reads every result back', async () => {
    const total = 2_000;
    async function* source(): AsyncGenerator<NativeBatchLine> {
      for (let i = 0; i < total; i++) yield line(`line-${i}`, `words ${i}`);
    }
    const handle = await provider.submit(source(), target);
    expect((await pollToEnd(handle)).at(-1)).toMatchObject({ status: 'completed', counts: { total, succeeded: total, failed: 0 } });
    let read = 0;
    for await (const result of provider.results(handle, target)) {
      expect(result).toMatchObject({ outcome: 'succeeded', completion: { choices: [{ message: { content: `Echo: words ${result.custom_id.slice(5)}` } }] } });
      read++;
    }
    expect(read).toBe(total);
  });

  it('cancels upstream: cancelling, then cancelled with every line not run reported batch_cancelled', async () => {
    const handle = await provider.submit([line('a', 'one'), line('b', 'two')], target);
    expect((await provider.poll(handle, target)).status).toBe('in_progress');
    const cancelling = await provider.cancel(handle, target);
    expect(cancelling.status).toBe('cancelling');
    const states = await pollToEnd(handle);
    expect(states.at(-1)).toMatchObject({ status: 'cancelled', hasResults: true });
    const results = await collect(provider.results(handle, target));
    expect([...results.values()]).toEqual([
      { custom_id: 'a', outcome: 'cancelled', error: { code: 'batch_cancelled', message: expect.any(String) } },
      { custom_id: 'b', outcome: 'cancelled', error: { code: 'batch_cancelled', message: expect.any(String) } },
    ]);
  });

  it('leaves a batch that already ended as it is when asked to cancel it', async () => {
    const handle = await provider.submit([line('a', 'one')], target);
    await pollToEnd(handle);
    expect(await provider.cancel(handle, target)).toMatchObject({ status: 'completed', hasResults: true });
  });

  it('reports an upstream expiry: expired, the lines run answered and the rest batch_expired', async () => {
    const t = withModel('sim-batch-expire');
    const handle = await provider.submit(['w', 'x', 'y', 'z'].map((k) => line(k, `line ${k}`)), t);
    const states = await pollToEnd(handle, t);
    expect(states.at(-1)).toMatchObject({ status: 'expired', hasResults: true, counts: { total: 4, succeeded: 2, failed: 2 } });
    const results = await collect(provider.results(handle, t));
    expect(['w', 'x'].map((k) => results.get(k)?.outcome)).toEqual(['succeeded', 'succeeded']);
    expect(['y', 'z'].map((k) => results.get(k))).toEqual([
      { custom_id: 'y', outcome: 'expired', error: { code: 'batch_expired', message: expect.any(String) } },
      { custom_id: 'z', outcome: 'expired', error: { code: 'batch_expired', message: expect.any(String) } },
    ]);
  });

  it.each([
    ['a parameter the provider cannot honour', [line('ok', 'fine'), line('bad-1', 'x', unsupported)], `bad-1.body.${unsupportedParam}`],
    ['a line key the batch API cannot carry', [line('not ok!', 'x')], 'custom_id'],
    ['a repeated line key', [line('same', 'x'), line('same', 'y')], 'custom_id'],
    ['no lines', [], 'lines'],
  ])('refuses %s with a 400 naming it, and makes no upstream batch', async (_name, lines, param) => {
    const before = await upstreamBatchCount();
    const err = await thrown(() => provider.submit(lines, target));
    expect(err).toBeInstanceOf(InputError);
    expect(err).toMatchObject({ status: 400, param });
    expect(await upstreamBatchCount()).toBe(before);
  });

  it('checks a line without calling anyone', () => {
    expect(() => provider.checkLine(line('x', 'y').request, providerModel)).not.toThrow();
    expect(() => provider.checkLine(line('x', 'y', unsupported).request, providerModel)).toThrow(expect.objectContaining({ param: unsupportedParam }));
  });

  it('reports a batch the provider does not have as not found, not as an unknown model', async () => {
    const err = await thrown(() => provider.poll({ id: 'nope', context: {} }, target));
    expect(err).toMatchObject({ status: 404, code: 'upstream_batch_not_found' });
  });

  it.each<[string, boolean, () => Partial<ChatTarget>]>([
    ['an unknown batch', false, () => ({})],
    ['a rejected credential', false, () => ({ apiKey: '' })],
    ['an unreachable provider', true, () => ({ baseUrl: 'http://127.0.0.1:9/v1' })],
  ])('types the failure of %s (retryable: %s)', async (_name, retryable, overrides) => {
    const err = await thrown(() => provider.poll({ id: 'nope', context: {} }, { ...target, ...overrides() }));
    expect(err).toBeInstanceOf(GatewayError);
    expect(isRetryableUpstreamError(err)).toBe(retryable);
  });
});
