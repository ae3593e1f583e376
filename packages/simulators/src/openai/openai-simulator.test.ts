import { startOpenAISimulator, SNAPSHOT_SUFFIX, TRICKLE_INTERVAL_MS, type OpenAISimulator } from './openai-simulator';

const AUTH = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };

// Response bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json();

/** Test-side reader: the simulator writes well-formed `data: ...\n\n` events. */
function dataEvents(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return block.slice('data: '.length);
    });
}

describe('OpenAI simulator', () => {
  let sim: OpenAISimulator;
  beforeAll(async () => {
    sim = await startOpenAISimulator({
      fixtures: { raw: { status: 200, headers: { 'x-request-id': 'req_fixture' }, body: '{"ok":true}' } },
    });
  });
  afterAll(() => sim.close());

  const chat = (body: object, headers: Record<string, string> = {}) =>
    fetch(`${sim.baseUrl}/chat/completions`, { method: 'POST', headers: { ...AUTH, ...headers }, body: JSON.stringify(body) });

  it('listens on an ephemeral loopback port', () => {
    expect(sim.port).toBeGreaterThan(0);
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
  });

  it.each([
    ['no header', {}],
    ['empty bearer', { authorization: 'Bearer  ' }],
    ['wrong scheme', { authorization: 'Basic abc' }],
  ])('answers 401 in OpenAI error shape with %s', async (_name, headers) => {
    const res = await fetch(`${sim.baseUrl}/chat/completions`, { method: 'POST', headers, body: '{}' });
    expect(res.status).toBe(401);
    expect(await jsonOf(res)).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: null } });
  });

  it('answers a chat completion with deterministic content, usage and a snapshot model', async () => {
    const res = await chat({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'be nice' }, { role: 'user', content: 'hello big world' }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = await jsonOf(res);
    expect(body).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: `gpt-4o-mini${SNAPSHOT_SUFFIX}`,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello big world', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
    });
  });

  it.each([
    ['max_tokens', { max_tokens: 2 }],
    ['max_completion_tokens', { max_completion_tokens: 2 }],
  ])('truncates with %s and finish_reason length', async (_name, cap) => {
    const body = await jsonOf(await chat({ model: 'm', messages: [{ role: 'user', content: 'one two three' }], ...cap }));
    expect(body.choices[0]).toMatchObject({ message: { content: 'Echo: one' }, finish_reason: 'length' });
    expect(body.usage.completion_tokens).toBe(2);
  });

  it('streams role, content, finish and usage chunks, then [DONE]', async () => {
    const res = await chat({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi you' }] });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = dataEvents(await res.text());
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.map((c) => c.object)).toEqual(Array(chunks.length).fill('chat.completion.chunk'));
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Echo: hi you');
    expect(chunks.at(-2).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 } });
  });

  it('streams sim-trickle one chunk per interval, the same events as any stream', async () => {
    const started = Date.now();
    const res = await chat({ model: 'sim-trickle', stream: true, messages: [{ role: 'user', content: 'a b' }] });
    const arrivals: number[] = [];
    let text = '';
    for await (const part of res.body!) {
      arrivals.push(Date.now() - started);
      text += Buffer.from(part).toString('utf8');
    }
    const events = dataEvents(text);
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.slice(0, -1).map((e) => JSON.parse(e).choices[0]?.delta.content ?? '').join('')).toBe('Echo: a b');
    expect(arrivals.length).toBeGreaterThan(1);
    expect(arrivals.at(-1)!).toBeGreaterThanOrEqual((events.length - 1) * TRICKLE_INTERVAL_MS);
  });

  it('sends no usage chunk unless include_usage is set', async () => {
    const events = dataEvents(await (await chat({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] })).text());
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('answers sim-tools with a tool call, whole and streamed', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const messages = [{ role: 'user', content: 'find cats' }];
    const whole = await jsonOf(await chat({ model: 'sim-tools', tools, messages }));
    expect(whole.choices[0]).toMatchObject({
      message: { content: null, tool_calls: [{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'lookup', arguments: '{"query":"find cats"}' } }] },
      finish_reason: 'tool_calls',
    });

    const events = dataEvents(await (await chat({ model: 'sim-tools', tools, messages, stream: true })).text());
    const deltas = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]);
    expect(deltas[0].delta.tool_calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'lookup', arguments: '' } });
    expect(deltas.map((d) => d.delta.tool_calls?.[0].function.arguments ?? '').join('')).toBe('{"query":"find cats"}');
    expect(deltas.at(-1).finish_reason).toBe('tool_calls');
  });

  it('answers sim-tools with text when no tools are given', async () => {
    const body = await jsonOf(await chat({ model: 'sim-tools', messages: [{ role: 'user', content: 'plain' }] }));
    expect(body.choices[0].message.content).toBe('Echo: plain');
  });

  it.each([400, 401, 403, 404, 429, 500, 503])('answers sim-error-%i with that status and an OpenAI error body', async (status) => {
    const res = await chat({ model: `sim-error-${status}`, messages: [{ role: 'user', content: 'x' }], stream: true });
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
    const { error } = await jsonOf(res);
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(error.message).toEqual(expect.any(String));
  });

  it('rejects a body that is not JSON', async () => {
    const res = await fetch(`${sim.baseUrl}/chat/completions`, { method: 'POST', headers: AUTH, body: '{nope' });
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error.type).toBe('invalid_request_error');
  });

  it.each([
    ['missing model', { messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ['empty messages', { model: 'm', messages: [] }, 'messages'],
    ['bad max_tokens', { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 'max_tokens'],
  ])('rejects %s', async (_name, body, param) => {
    const res = await chat(body);
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error.param).toBe(param);
  });

  it('rejects a parameter OpenAI does not have, as OpenAI does', async () => {
    const res = await chat({ model: 'm', messages: [{ role: 'user', content: 'x' }], top_k: 5 });
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error).toEqual({ message: 'Unrecognized request argument supplied: top_k', type: 'invalid_request_error', param: null, code: null });
  });

  it('takes every parameter OpenAI chat has', async () => {
    const res = await chat({
      model: 'm', messages: [{ role: 'user', content: 'x' }], user: 'u', safety_identifier: 's', prompt_cache_key: 'k', reasoning_effort: 'low',
      verbosity: 'low', service_tier: 'auto', store: false, metadata: {}, seed: 1, n: 1, stop: ['z'], logprobs: false, top_p: 1,
    });
    expect(res.status).toBe(200);
  });

  it('delays the response by x-sim-latency-ms', async () => {
    const started = performance.now();
    await jsonOf(await chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { 'x-sim-latency-ms': '120' }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('replays a fixture for sim-fixture-<name>', async () => {
    const res = await chat({ model: 'sim-fixture-raw', messages: [{ role: 'user', content: 'x' }] });
    expect(res.headers.get('x-request-id')).toBe('req_fixture');
    expect(await res.text()).toBe('{"ok":true}');
  });

  it('answers a repeated Idempotency-Key with the first completion instead of generating again', async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'once only' }] };
    const first = await chat(body, { 'idempotency-key': 'job-1:dep' });
    const again = await chat(body, { 'idempotency-key': 'job-1:dep' });
    const other = await chat(body, { 'idempotency-key': 'job-2:dep' });
    const unkeyed = [await chat(body), await chat(body)];
    const firstBody = await jsonOf(first);
    expect(await jsonOf(again)).toEqual(firstBody);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'));
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const ids = [firstBody.id, (await jsonOf(other)).id, ...(await Promise.all(unkeyed.map(jsonOf))).map((b) => b.id)];
    expect(new Set(ids).size).toBe(4);
  });

  it('lists models', async () => {
    const body = await jsonOf(await fetch(`${sim.baseUrl}/models`, { headers: AUTH }));
    expect(body.object).toBe('list');
    expect(body.data.length).toBeGreaterThanOrEqual(2);
    expect(body.data[0]).toEqual({ id: expect.any(String), object: 'model', created: expect.any(Number), owned_by: expect.any(String) });
  });

  it('answers 404 for unknown paths and counts requests', async () => {
    const before = sim.requests;
    const res = await fetch(`${sim.url}/v1/nope`, { headers: AUTH });
    expect(res.status).toBe(404);
    await res.text();
    expect(sim.requests).toBe(before + 1);
  });
});

describe('OpenAI simulator server-level latency', () => {
  it('delays the first byte of a stream by latencyMs', async () => {
    const sim = await startOpenAISimulator({ latencyMs: 100 });
    try {
      const started = performance.now();
      const res = await fetch(`${sim.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: AUTH,
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(90);
      await res.text();
    } finally {
      await sim.close();
    }
  });
});
