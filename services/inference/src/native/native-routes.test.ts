import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { catalogSchema } from '@gw/catalog';
import { closeServer, createHttpApp, createLogger, finishHttpApp, Health, IDENTITY_HEADER, IdentitySigner, IdentityVerifier, listen, type Identity } from '@gw/platform';
import { createChatProvider } from '@gw/providers';
import { startAnthropicSimulator, startOpenAISimulator, type AnthropicSimulator, type OpenAISimulator } from '@gw/simulators';
import { ModelDirectory } from '../catalog/model-objects';
import { DeploymentRouter } from '../routing/deployment-router';
import type { CallRecord } from '../usage/usage-recorder';
import { nativeRoutes } from './native-routes';
import { NativeService } from './native-service';
import { NativeTranslators } from './native-translators';
import { CallArchiver } from '@gw/call-archive';

const IDENTITY: Identity = { accountId: 'acct_native', keyHash: 'ab'.repeat(32), isManagement: false, keyLimitMicros: null, keyLimitReset: null };
const SECRET = 'native-routes-test-identity-secret-0123456789';
/** The token the edge would attach to this very request. */
const signed = (method: string, path: string, traceId = 'trace-native') => ({ [IDENTITY_HEADER]: new IdentitySigner(SECRET, 'edge').mint({ method, path }, IDENTITY, traceId) });
const price = { prompt_per_million: '1', completion_per_million: '2' };
// Response bodies are inspected loosely in tests.
const jsonOf = (res: Response): Promise<any> => res.json(); // eslint-disable-line @typescript-eslint/no-explicit-any
// Kept in memory, so a test can check what a call's log lines carry.
const logLines: string[] = [];
const logger = createLogger('native-test', 'info', new Writable({ write(chunk: Buffer, _enc, done) { logLines.push(...chunk.toString().split('\n').filter(Boolean)); done(); } }));

/**
 * An upstream that sends `response.created`, then holds the rest until `release()`: the test releases it once the
 * gateway has seen its client leave, so the order does not depend on timing.
 */
function startSlowResponsesUpstream(): Promise<{ server: Server; release(): void }> {
  const event = (type: string, response: object) => `event: ${type}\ndata: ${JSON.stringify({ type, response })}\n\n`;
  const response = { id: 'resp_slow', model: 'slow-1', usage: null };
  const held: Array<() => void> = [];
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(event('response.created', response));
    held.push(() => res.end(event('response.completed', { ...response, usage: { input_tokens: 7, output_tokens: 11, total_tokens: 18 } })));
  });
  const release = () => { for (const end of held.splice(0)) end(); };
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, release })));
}

function catalogFor(openai: OpenAISimulator, anthropic: AnthropicSimulator, slowPort: number) {
  const model = (id: string, deployments: Array<[provider: string, providerModel: string]>) => ({
    id, name: id, owned_by: 'tests', updated_at: '2026-01-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    per_request_limits: { prompt_tokens: null, completion_tokens: 100 },
    deployments: deployments.map(([provider, providerModel], i) => ({ id: `${id}-${i}`, provider, provider_model: providerModel, price })),
  });
  return catalogSchema.parse({
    providers: {
      openai: { kind: 'openai-compatible', base_url: openai.baseUrl, api_key_env: 'SIM_KEY', timeout_ms: 5_000 },
      anthropic: { kind: 'anthropic', base_url: anthropic.baseUrl, api_key_env: 'SIM_KEY', timeout_ms: 5_000 },
      slow: { kind: 'openai-compatible', base_url: `http://127.0.0.1:${slowPort}/v1`, api_key_env: 'SIM_KEY', timeout_ms: 5_000 },
    },
    models: [
      model('test/echo', [['openai', 'gpt-4o-mini']]),
      model('test/claude', [['anthropic', 'claude-echo']]),
      model('test/fallback', [['openai', 'sim-error-503'], ['openai', 'gpt-4.1']]),
      model('test/mixed', [['anthropic', 'claude-echo'], ['openai', 'gpt-4o-mini']]),
      model('test/drop', [['openai', 'sim-drop'], ['anthropic', 'sim-drop']]),
      model('test/slow', [['slow', 'slow-1']]),
    ],
  });
}

describe('native routes against the OpenAI and Anthropic simulators', () => {
  let openai: OpenAISimulator;
  let anthropic: AnthropicSimulator;
  let slow: Server;
  let releaseSlow: () => void;
  let translators: NativeTranslators;
  let router: DeploymentRouter;
  let server: Server;
  let base: string;
  const records: CallRecord[] = [];
  // Every native call is admitted against the key's spend grant (no request id of its own was made earlier).
  const admit = jest.fn(async () => ({ holdId: 'grant-native', micros: 1, grant: true }));

  beforeAll(async () => {
    let slowUpstream: { server: Server; release(): void };
    [openai, anthropic, slowUpstream] = await Promise.all([startOpenAISimulator(), startAnthropicSimulator(), startSlowResponsesUpstream()]);
    ({ server: slow, release: releaseSlow } = slowUpstream);
    const catalog = catalogFor(openai, anthropic, (slow.address() as { port: number }).port);
    translators = new NativeTranslators();
    router = new DeploymentRouter(catalog, createChatProvider, { SIM_KEY: 'k' }, logger,
      { maxRetries: 0, backoffMs: 0, maxBackoffMs: 0, failuresBeforeCooldown: 100, cooldownMs: 1 });
    const native = new NativeService({
      models: new ModelDirectory(catalog), router, translators, logger, archive: CallArchiver.off(logger),
      spend: { admit, giveBack: () => undefined } as never,
      usage: {
        record: (call: CallRecord) => { records.push(call); },
        openStream: () => ({ sendingTo: async () => undefined, noteOutput: () => undefined, close: () => undefined, discard: () => undefined }),
      } as never,
    });
    const app = createHttpApp({ logger, health: new Health(), bodyLimitBytes: 1 << 20, identity: new IdentityVerifier(SECRET) });
    app.use(nativeRoutes(native, { drainMs: 5_000, heartbeatMs: 0 }));
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await closeServer(server, 100);
    await translators.close();
    slow.closeAllConnections();
    await Promise.all([openai.close(), anthropic.close(), new Promise((r) => slow.close(r))]);
  });

  beforeEach(() => { records.length = 0; });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(`${base}${path}`, {
    method: 'POST', headers: { ...signed('POST', path), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
  const recorded = async (n = 1) => {
    for (let i = 0; i < 100 && records.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    return records;
  };

  it('passes a Response through with our request id, and records one responses usage event', async () => {
    const res = await post('/v1/responses', { model: 'test/echo', input: 'hello there' });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id')!;
    expect(requestId).toMatch(/^br-/);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ object: 'response', model: 'gpt-4o-mini-2026-01-01', output_text: 'Echo: hello there', store: false });
    expect(admit).toHaveBeenCalledWith(IDENTITY, requestId, expect.objectContaining({ maxOutputTokens: null, choices: 1 }), expect.any(String));
    expect(records).toEqual([expect.objectContaining({
      requestId, apiType: 'responses', model: 'test/echo', providerName: 'openai', providerResponseId: body.id, servedModel: body.model,
      streamed: false, cancelled: false, usage: expect.objectContaining({ prompt_tokens: 2, completion_tokens: 3, input_tokens: 2, output_tokens: 3 }),
    })]);
  });

  it('passes a messages stream through event for event and bills it once', async () => {
    const res = await post('/v1/messages', { model: 'test/claude', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'stream me' }] });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter(Boolean).map((b) => b.split('\n')[0]);
    expect(events[0]).toBe('event: message_start');
    expect(events.at(-1)).toBe('event: message_stop');
    expect(admit).toHaveBeenCalledWith(IDENTITY, res.headers.get('x-request-id'), expect.objectContaining({ maxOutputTokens: 50 }), expect.any(String));
    expect(await recorded()).toEqual([expect.objectContaining({
      requestId: res.headers.get('x-request-id'), apiType: 'messages', streamed: true, cancelled: false,
      providerResponseId: expect.stringMatching(/^msg_/), usage: expect.objectContaining({ completion_tokens: expect.any(Number) }),
    })]);
  });

  it('sends the provider model, the messages headers the API defines, and nothing else of the client', async () => {
    await post('/v1/messages', { model: 'test/claude', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
      { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024', 'x-custom': 'secret' });
    const sent = anthropic.lastRequest!;
    expect(JSON.parse(sent.body).model).toBe('claude-echo');
    expect(sent.headers).toMatchObject({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024', 'x-api-key': 'k' });
    expect(sent.headers['x-custom']).toBeUndefined();
    expect(sent.headers['x-gw-account-id']).toBeUndefined();
  });

  it('falls back before the first byte and bills the deployment that served', async () => {
    const res = await post('/v1/responses', { model: 'test/fallback', input: 'x', stream: true });
    expect(res.status).toBe(200);
    await res.text();
    expect((await recorded())[0]).toMatchObject({ deployment: { id: 'test/fallback-1' }, servedModel: 'gpt-4.1-2026-01-01' });
  });

  it.each([false, true])('the fallback log line carries the call\'s trace id and request id (stream: %s)', async (stream) => {
    const traceId = (stream ? 'b' : 'a').repeat(32);
    // The services take the trace id from the edge's signed token.
    const res = await post('/v1/responses', { model: 'test/fallback', input: 'x', stream }, signed('POST', '/v1/responses', traceId));
    expect(res.status).toBe(200);
    await res.text();
    const fallbacks = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'deployment failed; falling back' && l.traceId === traceId);
    expect(fallbacks).toEqual([expect.objectContaining({ service: 'native-test', requestId: res.headers.get('x-request-id'), deployment: 'test/fallback-0' })]);
  });

  it('routes each API only to the deployments that serve it', async () => {
    const res = await post('/v1/responses', { model: 'test/mixed', input: 'x' });
    expect(res.status).toBe(200);
    expect((await recorded())[0]).toMatchObject({ deployment: { id: 'test/mixed-1' } });
    expect((await post('/v1/messages', { model: 'test/mixed', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).status).toBe(200);
    expect((await recorded(2))[1]).toMatchObject({ deployment: { id: 'test/mixed-0' } });
  });

  it.each([
    ['/v1/messages', { model: 'test/echo', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }],
    ['/v1/responses', { model: 'test/claude', input: 'x' }],
  ])('%s on a model without a translator for it is a 400 unsupported_api naming model', async (path, body) => {
    const res = await post(path, body);
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error).toMatchObject({ code: 'unsupported_api', param: 'model' });
  });

  it('refuses without an identity, and answers 501 on the stored-response paths', async () => {
    expect((await fetch(`${base}/v1/responses`, { method: 'POST', body: '{}' })).status).toBe(401);
    for (const [method, path] of [['GET', '/v1/responses/resp_1'], ['GET', '/v1/responses/resp_1/input_items'], ['POST', '/v1/responses/resp_1/cancel']]) {
      const res = await fetch(`${base}${path}`, { method, headers: signed(method, path) });
      expect(res.status).toBe(501);
      expect((await jsonOf(res)).error.code).toBe('unsupported_feature');
    }
  });

  it.each([
    ['/v1/responses', { model: 'test/drop', input: 'x y', stream: true }, /^event: error\ndata: \{"type":"error","code":"upstream_error"/],
    ['/v1/messages', { model: 'test/drop', max_tokens: 9, messages: [{ role: 'user', content: 'x y' }], stream: true }, /^event: error\ndata: \{"type":"error","error":\{/],
  ])('%s: a failure after the first byte ends the stream with the format error event, still billed once', async (path, body, last) => {
    const res = await post(path, body);
    expect(res.status).toBe(200);
    const blocks = (await res.text()).split('\n\n').filter(Boolean);
    expect(blocks.length).toBeGreaterThan(1);
    expect(blocks.at(-1)).toMatch(last);
    expect(await recorded()).toHaveLength(1);
  });

  it('keeps reading a stream whose client went away, and bills what was generated as cancelled', async () => {
    // Resolves when the gateway sees the client close its stream before the stream finished.
    const clientLeft = new Promise<void>((resolve) => server.once('request', (_req, res) => res.once('close', () => { if (!res.writableFinished) resolve(); })));
    const res = await post('/v1/responses', { model: 'test/slow', input: 'x', stream: true });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await clientLeft;
    releaseSlow();
    const [record] = await recorded();
    expect(record).toMatchObject({ streamed: true, cancelled: true, providerResponseId: 'resp_slow', usage: { input_tokens: 7, output_tokens: 11 } });
  });
});
