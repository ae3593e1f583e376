import { SNAPSHOT_SUFFIX } from '../openai/openai-simulator';
import { GEMINI_SIM_INVALID_KEY, startGeminiSimulator, type GeminiSimulator } from './gemini-simulator';

const KEY = { 'x-goog-api-key': 'gm-test', 'content-type': 'application/json' };
const contents = (text: string) => [{ role: 'user', parts: [{ text }] }];

// Response bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json();

/** Test-side reader: the simulator frames events as Gemini does, `data: ...\r\n\r\n`. */
function dataEvents(text: string): any[] {
  expect(text.endsWith('\r\n\r\n')).toBe(true);
  return text
    .split('\r\n\r\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return JSON.parse(block.slice('data: '.length));
    });
}

describe('Gemini simulator', () => {
  let sim: GeminiSimulator;
  beforeAll(async () => {
    sim = await startGeminiSimulator({ fixtures: { raw: { status: 200, body: '{"ok":true}' } } });
  });
  afterAll(() => sim.close());

  const call = (model: string, method: string, body: object, headers: Record<string, string> = KEY) =>
    fetch(`${sim.baseUrl}/models/${model}:${method}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const generate = (body: object, model = 'gemini-2.5-flash') => call(model, 'generateContent', body);
  const stream = (body: object, model = 'gemini-2.5-flash') => call(model, 'streamGenerateContent?alt=sse', body);

  it('listens on an ephemeral loopback port with a v1beta base URL', () => {
    expect(sim.baseUrl).toBe(`http://127.0.0.1:${sim.port}/v1beta`);
  });

  it.each([
    ['no key', { 'content-type': 'application/json' }, 403, 'PERMISSION_DENIED'],
    ['an empty key', { 'x-goog-api-key': ' ' }, 403, 'PERMISSION_DENIED'],
    ['a bearer token instead', { authorization: 'Bearer gm-test' }, 403, 'PERMISSION_DENIED'],
    ['the revoked key', { 'x-goog-api-key': GEMINI_SIM_INVALID_KEY }, 400, 'INVALID_ARGUMENT'],
  ])('answers %s in Gemini error shape', async (_name, headers, status, canonical) => {
    const res = await call('gemini-2.5-flash', 'generateContent', { contents: contents('x') }, headers);
    expect(res.status).toBe(status);
    expect((await jsonOf(res)).error).toMatchObject({ code: status, message: expect.any(String), status: canonical });
  });

  it('reports a revoked key with ErrorInfo API_KEY_INVALID', async () => {
    const res = await call('m', 'generateContent', { contents: contents('x') }, { 'x-goog-api-key': GEMINI_SIM_INVALID_KEY });
    expect((await jsonOf(res)).error.details[0]).toMatchObject({ reason: 'API_KEY_INVALID' });
  });

  it('answers generateContent with deterministic text, usage and a snapshot model version', async () => {
    const res = await generate({ systemInstruction: { parts: [{ text: 'be nice' }] }, contents: contents('hello big world') });
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({
      candidates: [{ content: { parts: [{ text: 'Echo: hello big world' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 5 }] },
      modelVersion: `gemini-2.5-flash${SNAPSHOT_SUFFIX}`,
      responseId: expect.stringMatching(/^simresp/),
    });
  });

  it('truncates at maxOutputTokens with MAX_TOKENS', async () => {
    const body = await jsonOf(await generate({ contents: contents('one two three'), generationConfig: { maxOutputTokens: 2 } }));
    expect(body.candidates[0]).toMatchObject({ content: { parts: [{ text: 'Echo: one' }] }, finishReason: 'MAX_TOKENS' });
    expect(body.usageMetadata.candidatesTokenCount).toBe(2);
  });

  it('streams SSE events with cumulative usage, the last one finishing', async () => {
    const res = await stream({ contents: contents('hi you') });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = dataEvents(await res.text());
    expect(events.map((e) => e.candidates[0].content.parts[0].text).join('')).toBe('Echo: hi you');
    expect(events.map((e) => e.usageMetadata.candidatesTokenCount)).toEqual([1, 2, 3]);
    expect(events.map((e) => e.candidates[0].finishReason)).toEqual([undefined, undefined, 'STOP']);
    expect(new Set(events.map((e) => e.responseId)).size).toBe(1);
  });

  it('answers streamGenerateContent without alt=sse as one JSON array', async () => {
    const body = await jsonOf(await call('m', 'streamGenerateContent', { contents: contents('hi') }));
    expect(Array.isArray(body)).toBe(true);
    expect(body.at(-1).candidates[0].finishReason).toBe('STOP');
  });

  it('answers sim-tools with a function call when functions are declared, whole and streamed', async () => {
    const tools = [{ functionDeclarations: [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } }] }];
    const whole = await jsonOf(await generate({ contents: contents('find cats'), tools }, 'sim-tools'));
    expect(whole.candidates[0]).toMatchObject({ content: { parts: [{ functionCall: { name: 'lookup', args: { query: 'find cats' } } }] }, finishReason: 'STOP' });
    const events = dataEvents(await (await stream({ contents: contents('find cats'), tools }, 'sim-tools')).text());
    expect(events).toHaveLength(1);
    expect(events[0].candidates[0].content.parts[0].functionCall.name).toBe('lookup');
    expect((await jsonOf(await generate({ contents: contents('plain') }, 'sim-tools'))).candidates[0].content.parts[0].text).toBe('Echo: plain');
  });

  it('answers sim-refusal with finishReason SAFETY and no content', async () => {
    const body = await jsonOf(await generate({ contents: contents('x') }, 'sim-refusal'));
    expect(body.candidates[0]).toMatchObject({ finishReason: 'SAFETY', safetyRatings: expect.any(Array) });
    expect(body.candidates[0]).not.toHaveProperty('content');
  });

  it('thinks when asked, sending the thought only with includeThoughts', async () => {
    const shown = await jsonOf(await generate({ contents: contents('why'), generationConfig: { thinkingConfig: { thinkingBudget: 128, includeThoughts: true } } }));
    expect(shown.candidates[0].content.parts[0]).toEqual({ text: 'Thinking about: why', thought: true });
    expect(shown.usageMetadata).toMatchObject({ thoughtsTokenCount: 3, totalTokenCount: 1 + 2 + 3 });
    const hidden = await jsonOf(await generate({ contents: contents('why'), generationConfig: { thinkingConfig: { thinkingBudget: 128 } } }));
    expect(hidden.candidates[0].content.parts).toEqual([{ text: 'Echo: why' }]);
    expect(hidden.usageMetadata.thoughtsTokenCount).toBe(3);
  });

  it('answers JSON for responseMimeType application/json, several candidates, and logprobs', async () => {
    const body = await jsonOf(await generate({ contents: contents('hi'), generationConfig: { responseMimeType: 'application/json', candidateCount: 2, responseLogprobs: true, logprobs: 1 } }));
    expect(body.candidates.map((c: any) => JSON.parse(c.content.parts[0].text))).toEqual([{ echo: 'hi' }, { echo: 'hi' }]);
    expect(body.candidates[1].logprobsResult.chosenCandidates[0]).toEqual({ token: '{"echo":"hi"}', logProbability: -0.01 });
    expect(body.usageMetadata.candidatesTokenCount).toBe(2);
  });

  it.each([400, 401, 403, 404, 429, 500, 503, 504])('answers sim-error-%i with that status and a Gemini error body', async (status) => {
    const res = await stream({ contents: contents('x') }, `sim-error-${status}`);
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
    const { error } = await jsonOf(res);
    expect(error).toMatchObject({ code: status, message: expect.any(String), status: expect.stringMatching(/^[A-Z_]+$/) });
    if (status === 429) expect(error.details).toContainEqual(expect.objectContaining({ retryDelay: '1s' }));
  });

  it('drops the connection mid-stream for sim-drop', async () => {
    const res = await stream({ contents: contents('a b c') }, 'sim-drop');
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it.each([
    ['an unknown top-level field', { contents: contents('x'), temperature: 1 }, 'Unknown name "temperature"'],
    ['an unknown generationConfig field', { contents: contents('x'), generationConfig: { max_tokens: 5 } }, `Unknown name "max_tokens" at 'generation_config'`],
    ['no contents', { contents: [] }, 'contents is not specified'],
    ['an OpenAI role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'valid role'],
    ['empty parts', { contents: [{ role: 'user', parts: [] }] }, 'must not be empty'],
    [
      'a JSON Schema keyword in function parameters',
      { contents: contents('x'), tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'object', properties: { a: { type: 'object', additionalProperties: false } } } }] }] },
      `Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters.properties[a].value'`,
    ],
    ['empty object properties', { contents: contents('x'), tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'object', properties: {} } }] }] }, 'should be non-empty for OBJECT type'],
    ['a JSON Schema keyword in the response schema', { contents: contents('x'), generationConfig: { responseSchema: { type: 'object', $schema: 'x' } } }, 'Unknown name "$schema"'],
  ])('rejects %s with 400 INVALID_ARGUMENT', async (_name, body, message) => {
    const res = await generate(body);
    expect(res.status).toBe(400);
    const { error } = await jsonOf(res);
    expect(error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(error.message).toContain(message);
  });

  it('delays the response by x-sim-latency-ms', async () => {
    const started = performance.now();
    await jsonOf(await call('m', 'generateContent', { contents: contents('x') }, { ...KEY, 'x-sim-latency-ms': '120' }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('replays a fixture for sim-fixture-<name>', async () => {
    expect(await (await generate({ contents: contents('x') }, 'sim-fixture-raw')).text()).toBe('{"ok":true}');
  });

  it('answers 404 for other paths and counts requests', async () => {
    const before = sim.requests;
    const res = await fetch(`${sim.baseUrl}/models/m:countTokens`, { method: 'POST', headers: KEY, body: '{}' });
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).error.status).toBe('NOT_FOUND');
    expect(sim.requests).toBe(before + 1);
  });
});

describe('Gemini simulator server-level latency', () => {
  it('delays the first byte of a stream by latencyMs', async () => {
    const sim = await startGeminiSimulator({ latencyMs: 100 });
    try {
      const started = performance.now();
      const res = await fetch(`${sim.baseUrl}/models/m:streamGenerateContent?alt=sse`, { method: 'POST', headers: KEY, body: JSON.stringify({ contents: contents('x') }) });
      expect(performance.now() - started).toBeGreaterThanOrEqual(90);
      await res.text();
    } finally {
      await sim.close();
    }
  });
});
