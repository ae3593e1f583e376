import { REQUEST_COUNT_PATH, SNAPSHOT_SUFFIX } from './http-kit';
import { startSimulators } from './simulators';

type Sim = Awaited<ReturnType<typeof startSimulators>>;

// Response bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json();

const OPENAI = { authorization: 'Bearer sk-test', 'content-type': 'application/json' };
const ANTHROPIC = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const GEMINI = { 'x-goog-api-key': 'gm-test', 'content-type': 'application/json' };

const chat = (sim: Sim, headers: Record<string, string> = {}) =>
  fetch(`${sim.url}/v1/chat/completions`, { method: 'POST', headers: { ...OPENAI, ...headers }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi there' }] }) });
const messages = (sim: Sim, headers: Record<string, string> = {}) =>
  fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { ...ANTHROPIC, ...headers }, body: JSON.stringify({ model: 'claude-echo', max_tokens: 50, messages: [{ role: 'user', content: 'hi there' }] }) });
const generate = (sim: Sim, method = 'generateContent', headers: Record<string, string> = {}) =>
  fetch(`${sim.url}/v1beta/models/gemini-echo:${method}`, { method: 'POST', headers: { ...GEMINI, ...headers }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi there' }] }] }) });

describe('all simulators on one port', () => {
  let sim: Sim;
  beforeAll(async () => {
    sim = await startSimulators();
  });
  afterAll(() => sim.close());

  it('listens on an ephemeral loopback port', () => {
    expect(sim.port).toBeGreaterThan(0);
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
  });

  it('answers OpenAI chat completions', async () => {
    const res = await chat(sim);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_sim/);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ object: 'chat.completion', model: `gpt-4o-mini${SNAPSHOT_SUFFIX}` });
    expect(body.choices[0].message.content).toBe('Echo: hi there');
  });

  it('answers OpenAI responses', async () => {
    const res = await fetch(`${sim.url}/v1/responses`, { method: 'POST', headers: OPENAI, body: JSON.stringify({ model: 'gpt-4.1', input: 'hi there' }) });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toMatchObject({ object: 'response', status: 'completed', output_text: 'Echo: hi there' });
  });

  it('lists OpenAI models and keeps OpenAI auth on OpenAI paths', async () => {
    const models = await fetch(`${sim.url}/v1/models`, { headers: OPENAI });
    expect(models.status).toBe(200);
    expect((await jsonOf(models)).object).toBe('list');
    const anonymous = await fetch(`${sim.url}/v1/models`);
    expect(anonymous.status).toBe(401);
    expect((await jsonOf(anonymous)).error.type).toBe('invalid_request_error');
  });

  it('answers Anthropic messages, streamed too', async () => {
    const res = await messages(sim);
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/^req_sim/);
    expect(await jsonOf(res)).toMatchObject({ type: 'message', model: `claude-echo${SNAPSHOT_SUFFIX}`, content: [{ type: 'text', text: 'Echo: hi there' }] });
    const stream = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST', headers: ANTHROPIC, body: JSON.stringify({ model: 'claude-echo', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(await stream.text()).toContain('event: message_stop');
  });

  it('keeps Anthropic auth on /v1/messages', async () => {
    const res = await fetch(`${sim.url}/v1/messages`, { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, body: '{}' });
    expect(res.status).toBe(401);
    expect((await jsonOf(res)).error.type).toBe('authentication_error');
  });

  it('answers Gemini generateContent and streamGenerateContent', async () => {
    const res = await generate(sim);
    expect(res.status).toBe(200);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ modelVersion: `gemini-echo${SNAPSHOT_SUFFIX}` });
    expect(body.candidates[0].content.parts[0].text).toBe('Echo: hi there');
    const stream = await generate(sim, 'streamGenerateContent?alt=sse');
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(await stream.text()).toMatch(/^data: /);
  });

  it('answers Gemini-shaped errors under /v1beta', async () => {
    const noKey = await generate(sim, 'generateContent', { 'x-goog-api-key': '' });
    expect(noKey.status).toBe(403);
    const unknown = await fetch(`${sim.url}/v1beta/models/m:countTokens`, { method: 'POST', headers: GEMINI, body: '{}' });
    expect(unknown.status).toBe(404);
    expect((await jsonOf(unknown)).error.status).toBe('NOT_FOUND');
  });

  it.each([
    ['GET', '/'],
    ['POST', '/v1/complete'],
    ['POST', '/v2/chat/completions'],
    ['GET', '/v1/models/gpt-4o-mini'],
  ])('answers 404 for %s %s, with or without a key, and counts requests', async (method, path) => {
    const before = sim.requests;
    for (const headers of [{}, OPENAI]) {
      const res = await fetch(`${sim.url}${path}`, { method, headers, body: method === 'POST' ? '{}' : undefined });
      expect(res.status).toBe(404);
      expect((await jsonOf(res)).error.message).toBe(`No simulated API at ${method} ${path}`);
    }
    expect(sim.requests).toBe(before + 2);
  });

  it('tells a test in another process how many requests it received, without counting that question', async () => {
    await chat(sim);
    const count = async () => ((await (await fetch(`${sim.url}${REQUEST_COUNT_PATH}`)).json()) as { requests: number }).requests;
    expect(await count()).toBe(sim.requests);
    expect(await count()).toBe(sim.requests);
  });

    it('delays any format by x-sim-latency-ms', async () => {
    for (const call of [() => chat(sim, { 'x-sim-latency-ms': '120' }), () => messages(sim, { 'x-sim-latency-ms': '120' }), () => generate(sim, 'generateContent', { 'x-sim-latency-ms': '120' })]) {
      const started = performance.now();
      expect((await call()).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    }
  });
});

describe('all simulators on one port, with latency', () => {
  let sim: Sim;
  beforeAll(async () => {
    sim = await startSimulators({ latencyMs: 150 });
  });
  afterAll(() => sim.close());

  it('delays every format by latencyMs', async () => {
    const started = performance.now();
    const statuses = await Promise.all([chat(sim), messages(sim), generate(sim)].map(async (r) => (await r).status));
    expect(statuses).toEqual([200, 200, 200]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('lets x-sim-latency-ms override it', async () => {
    const started = performance.now();
    expect((await chat(sim, { 'x-sim-latency-ms': '0' })).status).toBe(200);
    expect((await messages(sim, { 'x-sim-latency-ms': '0' })).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(140);
  });

  it('answers 404s and the model list at once', async () => {
    const started = performance.now();
    expect((await fetch(`${sim.url}/nowhere`)).status).toBe(404);
    expect((await fetch(`${sim.url}/v1/models`, { headers: OPENAI })).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(140);
  });
});
