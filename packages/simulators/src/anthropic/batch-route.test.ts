import * as recorded from '../../../providers/src/anthropic/fixtures/recorded-anthropic-batch-shapes';
import { startAnthropicSimulator, type AnthropicSimulator } from './anthropic-simulator';

const HEADERS = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
// Bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json();
const keys = (o: object) => Object.keys(o).sort();

const request = (customId: string, text: string, model = 'claude-echo') => ({ custom_id: customId, params: { model, max_tokens: 50, messages: [{ role: 'user', content: text }] } });

describe('Anthropic simulator: message batches', () => {
  let sim: AnthropicSimulator;
  beforeAll(async () => {
    sim = await startAnthropicSimulator();
  });
  afterAll(() => sim.close());

  const create = (requests: unknown) => fetch(`${sim.baseUrl}/messages/batches`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ requests }) });
  const poll = async (id: string) => jsonOf(await fetch(`${sim.baseUrl}/messages/batches/${id}`, { headers: HEADERS }));
  const results = async (id: string) => (await (await fetch(`${sim.baseUrl}/messages/batches/${id}/results`, { headers: HEADERS })).text()).trim().split('\n').map((l) => JSON.parse(l));

  it('runs a batch over two polls to ended, with request_counts and JSONL results', async () => {
    const created = await jsonOf(await create([request('a', 'hello there'), request('b', 'sim-error-529 busy')]));
    expect(keys(created)).toEqual(keys(recorded.inProgressBatch));
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', request_counts: { processing: 2, succeeded: 0 }, results_url: null });
    expect((await fetch(`${sim.baseUrl}/messages/batches/${created.id}/results`, { headers: HEADERS })).status).toBe(400);

    expect((await poll(created.id)).processing_status).toBe('in_progress');
    const ended = await poll(created.id);
    expect(keys(ended)).toEqual(keys(recorded.endedBatch));
    expect(ended).toMatchObject({
      processing_status: 'ended', ended_at: expect.any(String), results_url: `${sim.url}/v1/messages/batches/${created.id}/results`,
      request_counts: { processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 },
    });
    const lines = await results(created.id);
    expect(keys(lines[0].result.message)).toEqual(keys(recorded.succeededLine.result.message));
    expect(lines).toEqual([
      { custom_id: 'a', result: { type: 'succeeded', message: expect.objectContaining({ content: [{ type: 'text', text: 'Echo: hello there' }] }) } },
      { custom_id: 'b', result: { type: 'errored', error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } } },
    ]);
  });

  it('cancels: canceling, then ended with the lines not run canceled; an ended batch is answered as it is', async () => {
    const created = await jsonOf(await create([request('a', 'one'), request('b', 'two')]));
    const cancel = async () => jsonOf(await fetch(`${sim.baseUrl}/messages/batches/${created.id}/cancel`, { method: 'POST', headers: HEADERS }));
    expect(await cancel()).toMatchObject({ processing_status: 'canceling', cancel_initiated_at: expect.any(String) });
    expect(await poll(created.id)).toMatchObject({ processing_status: 'ended', request_counts: { canceled: 2 } });
    expect((await results(created.id)).map((l) => l.result)).toEqual([recorded.canceledLine.result, recorded.canceledLine.result]);
    expect(await cancel()).toMatchObject({ processing_status: 'ended' });
  });

  it('ends a sim-batch-expire batch with its second half expired', async () => {
    const created = await jsonOf(await create(['a', 'b', 'c', 'd'].map((k) => request(k, k, 'sim-batch-expire'))));
    await poll(created.id);
    expect(await poll(created.id)).toMatchObject({ processing_status: 'ended', request_counts: { succeeded: 2, expired: 2 } });
    expect((await results(created.id)).slice(2)).toEqual([{ ...recorded.expiredLine, custom_id: 'c' }, { ...recorded.expiredLine, custom_id: 'd' }]);
  });

  it('cuts short the results line of a sim-broken-result request (counted succeeded): the file is damaged, not the run', async () => {
    const created = await jsonOf(await create([request('a', 'one'), request('b', 'sim-broken-result please'), request('c', 'three')]));
    await poll(created.id);
    expect(await poll(created.id)).toMatchObject({ processing_status: 'ended', request_counts: { succeeded: 3 } });
    const text = await (await fetch(`${sim.baseUrl}/messages/batches/${created.id}/results`, { headers: HEADERS })).text();
    const lines = text.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(() => JSON.parse(lines[1]!)).toThrow();
    expect(lines[1]!.startsWith('{"custom_id":"b"')).toBe(true);
    expect(JSON.parse(lines[2]!)).toMatchObject({ custom_id: 'c', result: { type: 'succeeded' } });
  });

  it.each([
    ['no requests', []],
    ['a custom_id Anthropic refuses', [request('not ok!', 'x')]],
    ['a repeated custom_id', [request('a', 'x'), request('a', 'y')]],
    ['params without max_tokens', [{ custom_id: 'a', params: { model: 'm', messages: [{ role: 'user', content: 'x' }] } }]],
  ])('refuses a create with %s', async (_name, requests) => {
    const res = await create(requests);
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error.type).toBe('invalid_request_error');
  });

  it('lists batches and answers an unknown one with not_found_error', async () => {
    const list = await jsonOf(await fetch(`${sim.baseUrl}/messages/batches`, { headers: HEADERS }));
    expect(list).toMatchObject({ data: expect.any(Array), has_more: false });
    const res = await fetch(`${sim.baseUrl}/messages/batches/msgbatch_nope`, { headers: HEADERS });
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).error.type).toBe('not_found_error');
  });
});
