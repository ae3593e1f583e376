import { namedEvents as events } from '../testing/named-events';
import { startOpenAISimulator, SNAPSHOT_SUFFIX, type OpenAISimulator } from './openai-simulator';

const AUTH = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };

// Response bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json();

const RESPONSE_FIELDS = [
  'background', 'created_at', 'error', 'id', 'incomplete_details', 'instructions', 'max_output_tokens', 'max_tool_calls',
  'metadata', 'model', 'object', 'output', 'output_text', 'parallel_tool_calls', 'previous_response_id', 'prompt',
  'prompt_cache_key', 'prompt_cache_retention', 'reasoning', 'safety_identifier', 'service_tier', 'status', 'store',
  'temperature', 'text', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'truncation', 'usage', 'user',
];

const WEATHER_TOOL = { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

describe('OpenAI simulator: POST /v1/responses', () => {
  let sim: OpenAISimulator;
  beforeAll(async () => {
    sim = await startOpenAISimulator({
      fixtures: { recorded: { status: 200, body: 'event: response.created\ndata: {"type":"response.created"}\n\n' } },
    });
  });
  afterAll(() => sim.close());

  const create = (body: object, headers: Record<string, string> = {}) =>
    fetch(`${sim.baseUrl}/responses`, { method: 'POST', headers: { ...AUTH, ...headers }, body: JSON.stringify(body) });

  it('answers a Response object with every field, a message item, output_text and usage', async () => {
    const res = await create({ model: 'gpt-4o-mini', instructions: 'be nice', input: 'hello big world', metadata: { team: 'a' }, temperature: 0.5 });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_sim/);
    const body = await jsonOf(res);
    expect(Object.keys(body).sort()).toEqual(RESPONSE_FIELDS);
    expect(body).toMatchObject({
      id: expect.stringMatching(/^resp_sim/),
      object: 'response',
      created_at: expect.any(Number),
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'be nice',
      model: `gpt-4o-mini${SNAPSHOT_SUFFIX}`,
      output: [{
        id: expect.stringMatching(/^msg_sim/), type: 'message', status: 'completed', role: 'assistant',
        content: [{ type: 'output_text', text: 'Echo: hello big world', annotations: [] }],
      }],
      output_text: 'Echo: hello big world',
      temperature: 0.5,
      metadata: { team: 'a' },
      usage: { input_tokens: 5, output_tokens: 4, total_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  it('reads input items and stops at max_output_tokens with status incomplete', async () => {
    const body = await jsonOf(await create({
      model: 'gpt-4.1',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'one two three four five' }] }],
      max_output_tokens: 3,
    }));
    expect(body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'Echo: one two' });
    expect(body.output[0].status).toBe('incomplete');
  });

  it('streams the real event sequence, numbered, ending in response.completed', async () => {
    const res = await create({ model: 'gpt-4o-mini', input: 'stream me back', stream: true });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const evs = events(await res.text());
    expect(evs.map((e) => e.event)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.delta', 'response.output_text.delta', 'response.output_text.delta', 'response.output_text.delta',
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
    ]);
    expect(evs.map((e) => e.data.sequence_number)).toEqual(evs.map((_, i) => i));
    expect(evs[0].data.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    const deltas = evs.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('');
    expect(deltas).toBe('Echo: stream me back');
    expect(evs[8].data.text).toBe(deltas);
    const done = evs.at(-1)!.data.response;
    expect(done).toMatchObject({ status: 'completed', output_text: deltas, usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 } });
    expect(done.id).toBe(evs[0].data.response.id);
  });

  it('ends a cut-off stream with response.incomplete', async () => {
    const evs = events(await (await create({ model: 'gpt-4o-mini', input: 'a b c d e', stream: true, max_output_tokens: 2 })).text());
    expect(evs.at(-1)).toMatchObject({ event: 'response.incomplete', data: { response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } } });
  });

  it('calls the first function tool for sim-tools, in the body and in the stream', async () => {
    const body = await jsonOf(await create({ model: 'sim-tools', input: 'weather in Paris', tools: [WEATHER_TOOL] }));
    expect(body.output).toEqual([{
      id: expect.stringMatching(/^fc_sim/), type: 'function_call', status: 'completed', call_id: expect.stringMatching(/^call_sim/),
      name: 'get_weather', arguments: JSON.stringify({ query: 'weather in Paris' }),
    }]);
    expect(body.output_text).toBe('');

    const evs = events(await (await create({ model: 'sim-tools', input: 'weather in Paris', tools: [WEATHER_TOOL], stream: true })).text());
    const args = evs.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta).join('');
    expect(args).toBe(JSON.stringify({ query: 'weather in Paris' }));
    expect(evs.find((e) => e.event === 'response.function_call_arguments.done')!.data).toMatchObject({ name: 'get_weather', arguments: args });
    expect(evs.some((e) => e.event.startsWith('response.content_part'))).toBe(false);
    expect(evs.at(-1)!.event).toBe('response.completed');
  });

  it('refuses for sim-refusal with a refusal content part and refusal events', async () => {
    const body = await jsonOf(await create({ model: 'sim-refusal', input: 'something bad' }));
    expect(body.output[0].content).toEqual([{ type: 'refusal', refusal: expect.stringContaining('sorry') }]);
    expect(body.output_text).toBe('');

    const evs = events(await (await create({ model: 'sim-refusal', input: 'something bad', stream: true })).text());
    const refusal = evs.filter((e) => e.event === 'response.refusal.delta').map((e) => e.data.delta).join('');
    expect(evs.find((e) => e.event === 'response.refusal.done')!.data.refusal).toBe(refusal);
    expect(evs.some((e) => e.event === 'response.output_text.delta')).toBe(false);
  });

  it.each([
    [429, 'rate_limit_exceeded'],
    [500, null],
    [400, 'invalid_value'],
  ])('answers sim-error-%i in OpenAI error shape', async (status, code) => {
    const res = await create({ model: `sim-error-${status}`, input: 'x' });
    expect(res.status).toBe(status);
    expect((await jsonOf(res)).error).toMatchObject({ code });
    if (status === 429) expect(res.headers.get('retry-after')).toBe('1');
  });

  it.each([
    ['model missing', { input: 'x' }, 'model'],
    ['input not a string or array', { model: 'gpt-4o-mini', input: 7 }, 'input'],
    ['max_output_tokens not positive', { model: 'gpt-4o-mini', input: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
    ['a parameter the Responses API does not have', { model: 'gpt-4o-mini', input: 'x', max_tokens: 5 }, 'max_tokens'],
  ])('answers 400 when %s', async (_name, body, param) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error).toMatchObject({ type: 'invalid_request_error', param });
  });

  it('cuts the connection for sim-drop: at once, or in a stream after the first events', async () => {
    await expect(create({ model: 'sim-drop', input: 'x' })).rejects.toThrow();
    const res = await create({ model: 'sim-drop', input: 'x y z', stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    await expect((async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })()).rejects.toThrow();
    expect(events(text).map((e) => e.event)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
  });

  it('waits the latency the header asks for', async () => {
    const started = Date.now();
    await (await create({ model: 'gpt-4o-mini', input: 'x' }, { 'x-sim-latency-ms': '120' })).text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it('replays fixtures as event streams', async () => {
    const res = await create({ model: 'sim-fixture-recorded', input: 'x' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await res.text()).toContain('event: response.created');
  });
});
