import { SNAPSHOT_SUFFIX, TRICKLE_INTERVAL_MS } from '../openai/openai-simulator';
import { namedEvents as events } from '../testing/named-events';
import { startAnthropicSimulator, type AnthropicSimulator } from './anthropic-simulator';

const HEADERS = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const hello = [{ role: 'user', content: 'hello big world' }];

// Response bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json();

describe('Anthropic simulator', () => {
  let sim: AnthropicSimulator;
  beforeAll(async () => {
    sim = await startAnthropicSimulator({ fixtures: { raw: { status: 200, headers: { 'request-id': 'req_fixture' }, body: '{"ok":true}' } } });
  });
  afterAll(() => sim.close());

  const post = (body: object, headers: Record<string, string> = {}) =>
    fetch(`${sim.baseUrl}/messages`, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });
  const message = (body: object = {}) => post({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: hello, ...body });

  it.each([
    ['no header', { 'anthropic-version': '2023-06-01' }],
    ['empty key', { 'x-api-key': ' ', 'anthropic-version': '2023-06-01' }],
  ])('answers 401 in Anthropic error shape with %s', async (_name, headers) => {
    const res = await fetch(`${sim.baseUrl}/messages`, { method: 'POST', headers, body: '{}' });
    expect(res.status).toBe(401);
    expect(await jsonOf(res)).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) }, request_id: expect.stringMatching(/^req_/) });
  });

  it('answers a message with deterministic echo text, usage and a snapshot model', async () => {
    const res = await message({ system: 'be nice' });
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/^req_sim/);
    expect(await jsonOf(res)).toEqual({
      id: expect.stringMatching(/^msg_sim/),
      type: 'message',
      role: 'assistant',
      model: `claude-sonnet-4-5${SNAPSHOT_SUFFIX}`,
      content: [{ type: 'text', text: 'Echo: hello big world' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 4, service_tier: 'standard' },
    });
  });

  it.each([
    ['max_tokens truncation', { max_tokens: 2 }, 'Echo: hello', 'max_tokens', null],
    ['a stop sequence', { stop_sequences: ['big'] }, 'Echo: hello', 'stop_sequence', 'big'],
  ])('stops on %s', async (_name, extra, text, stopReason, stopSequence) => {
    const body = await jsonOf(await message(extra));
    expect(body).toMatchObject({ content: [{ type: 'text', text }], stop_reason: stopReason, stop_sequence: stopSequence });
  });

  it('streams the exact Anthropic event sequence, with a ping after the first block start', async () => {
    const res = await message({ stream: true, messages: [{ role: 'user', content: 'hi you' }] });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const received = events(await res.text());
    expect(received.map((e) => e.event)).toEqual([
      'message_start', 'content_block_start', 'ping',
      'content_block_delta', 'content_block_delta', 'content_block_delta',
      'content_block_stop', 'message_delta', 'message_stop',
    ]);
    expect(received[0].data.message).toMatchObject({ id: expect.stringMatching(/^msg_/), content: [], stop_reason: null, usage: { input_tokens: 2, output_tokens: 1 } });
    expect(received[1].data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(received.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text).join('')).toBe('Echo: hi you');
    expect(received[7].data).toMatchObject({ delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } });
  });

  it('streams extended thinking before the text when thinking is enabled', async () => {
    const received = events(await (await message({ stream: true, thinking: { type: 'enabled', budget_tokens: 1024 } })).text());
    const starts = received.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block.type);
    expect(starts).toEqual(['thinking', 'text']);
    const deltaTypes = new Set(received.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.type));
    expect(deltaTypes).toEqual(new Set(['thinking_delta', 'signature_delta', 'text_delta']));
  });

  describe('tools', () => {
    const tools = [{ name: 'lookup', input_schema: { type: 'object' } }, { name: 'other', input_schema: { type: 'object' } }];
    const findCats = [{ role: 'user', content: 'find cats' }];

    it.each([
      ['sim-tools', 'sim-tools', undefined, 'lookup'],
      ['a forced tool', 'claude-x', { type: 'tool', name: 'other' }, 'other'],
      ['tool_choice any', 'claude-x', { type: 'any' }, 'lookup'],
    ])('answers %s with a tool_use block', async (_name, model, tool_choice, name) => {
      const body = await jsonOf(await post({ model, max_tokens: 50, tools, tool_choice, messages: findCats }));
      expect(body).toMatchObject({ content: [{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name, input: { query: 'find cats' } }], stop_reason: 'tool_use' });
    });

    it('streams the tool input as input_json_delta pieces', async () => {
      const received = events(await (await post({ model: 'sim-tools', max_tokens: 50, tools, messages: findCats, stream: true })).text());
      expect(received[1].data.content_block).toEqual({ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'lookup', input: {} });
      const pieces = received.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
      expect(pieces.length).toBeGreaterThan(2);
      expect(pieces.every((d) => d.type === 'input_json_delta')).toBe(true);
      expect(pieces.map((d) => d.partial_json).join('')).toBe('{"query":"find cats"}');
    });

    it('answers text for sim-tools without tools', async () => {
      expect((await jsonOf(await post({ model: 'sim-tools', max_tokens: 50, messages: findCats }))).content).toEqual([{ type: 'text', text: 'Echo: find cats' }]);
    });
  });

  describe('count_tokens', () => {
    const count = (body: object, headers: Record<string, string> = HEADERS) =>
      fetch(`${sim.baseUrl}/messages/count_tokens`, { method: 'POST', headers, body: JSON.stringify(body) });

    it('counts the input tokens a message call with the same prompt reports, without max_tokens', async () => {
      const prompt = { model: 'claude-sonnet-4-5', system: 'be nice', messages: hello };
      const res = await count(prompt);
      expect(res.status).toBe(200);
      const counted = await jsonOf(res);
      expect(counted).toEqual({ input_tokens: expect.any(Number) });
      const answered = await jsonOf(await post({ ...prompt, max_tokens: 10 }));
      expect(counted.input_tokens).toBe(answered.usage.input_tokens);
    });

    it.each([
      ['no messages', { model: 'claude-sonnet-4-5', messages: [] }, HEADERS, 400, 'invalid_request_error'],
      ['no anthropic-version', { model: 'claude-sonnet-4-5', messages: hello }, { 'x-api-key': 'k' }, 400, 'invalid_request_error'],
      ['no key', { model: 'claude-sonnet-4-5', messages: hello }, { 'anthropic-version': '2023-06-01' }, 401, 'authentication_error'],
      ['max_tokens, which only a message call takes', { model: 'claude-sonnet-4-5', messages: hello, max_tokens: 5 }, HEADERS, 400, 'invalid_request_error'],
    ])('refuses %s as Anthropic does', async (_name, body, headers, status, type) => {
      const res = await count(body, headers);
      expect(res.status).toBe(status);
      expect((await jsonOf(res)).error.type).toBe(type);
    });
  });

  it('answers sim-refusal with stop_reason refusal', async () => {
    const body = await jsonOf(await message({ model: 'sim-refusal' }));
    expect(body).toMatchObject({ content: [], stop_reason: 'refusal' });
  });

  it.each([400, 401, 402, 403, 404, 413, 429, 500, 504, 529])('answers sim-error-%i with that status and an Anthropic error body', async (status) => {
    const res = await message({ model: `sim-error-${status}`, stream: true });
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
    const body = await jsonOf(res);
    expect(body).toEqual({ type: 'error', error: { type: expect.any(String), message: expect.any(String) }, request_id: expect.any(String) });
    if (status === 529) expect(body.error.type).toBe('overloaded_error');
  });

  it('streams sim-trickle one event per interval, the same sequence as any stream', async () => {
    const started = Date.now();
    const res = await message({ model: 'sim-trickle', stream: true });
    const text = await res.text();
    const names = text.split('\n\n').filter(Boolean).map((e) => e.split('\n')[0]);
    expect(names[0]).toBe('event: message_start');
    expect(names.at(-1)).toBe('event: message_stop');
    expect(Date.now() - started).toBeGreaterThanOrEqual(names.length * TRICKLE_INTERVAL_MS);
  });

  it('drops the connection mid-stream for sim-drop', async () => {
    const res = await message({ model: 'sim-drop', stream: true });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it.each([
    ['missing anthropic-version', { model: 'm', max_tokens: 5, messages: hello }, { 'anthropic-version': '' }, /anthropic-version/],
    ['missing max_tokens', { model: 'm', messages: hello }, {}, /max_tokens/],
    ['empty messages', { model: 'm', max_tokens: 5, messages: [] }, {}, /messages/],
    ['missing model', { max_tokens: 5, messages: hello }, {}, /model/],
    ['a field the Messages API does not have', { model: 'm', max_tokens: 5, messages: hello, temperature: 0.5, top_n: 3 }, {}, /^top_n: Extra inputs are not permitted$/],
  ])('rejects %s with invalid_request_error', async (_name, body, headers, message) => {
    const h: Record<string, string> = { ...HEADERS, ...headers };
    if (h['anthropic-version'] === '') delete h['anthropic-version'];
    const res = await fetch(`${sim.baseUrl}/messages`, { method: 'POST', headers: h, body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error).toEqual({ type: 'invalid_request_error', message: expect.stringMatching(message) });
  });

  it('delays the response by x-sim-latency-ms', async () => {
    const started = performance.now();
    await jsonOf(await post({ model: 'm', max_tokens: 5, messages: hello }, { 'x-sim-latency-ms': '120' }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('replays a fixture and remembers the last request', async () => {
    const res = await post({ model: 'sim-fixture-raw', max_tokens: 5, messages: hello }, { 'anthropic-beta': 'b1' });
    expect(res.headers.get('request-id')).toBe('req_fixture');
    expect(await res.text()).toBe('{"ok":true}');
    expect(sim.lastRequest?.headers['anthropic-beta']).toBe('b1');
    expect(JSON.parse(sim.lastRequest?.body ?? '')).toMatchObject({ model: 'sim-fixture-raw' });
  });

  it('answers 404 for unknown paths and counts requests', async () => {
    const before = sim.requests;
    const res = await fetch(`${sim.url}/v1/complete`, { method: 'POST', headers: HEADERS, body: '{}' });
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).error.type).toBe('not_found_error');
    expect(sim.requests).toBe(before + 1);
  });
});
