import { GatewayError, InputError, NotFoundError, RateLimitError, TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type ChatCompletionRequest, type ChatTarget } from '@gw/provider-spec';
// The simulator is this package's upstream in tests; imported by path to keep it out of the runtime deps.
import { GEMINI_SIM_INVALID_KEY, startGeminiSimulator, type GeminiSimulator } from '../../../simulators/src';
import { OriginPools } from '../http/origin-pools';
import { geminiSimulatorFixtures } from './fixtures/simulator-fixtures';
import { GeminiChatProvider } from './gemini-chat-provider';

const ask = (fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({ model: 'acme/gem', messages: [{ role: 'user', content: 'hi' }], ...fields });
const methods = ['chat', 'chatStream'] as const;

describe('GeminiChatProvider failures against the Gemini simulator', () => {
  let sim: GeminiSimulator;
  let provider: GeminiChatProvider;
  let target: ChatTarget;

  beforeAll(async () => {
    sim = await startGeminiSimulator({ fixtures: geminiSimulatorFixtures });
    provider = new GeminiChatProvider(new OriginPools());
    target = { baseUrl: sim.baseUrl, apiKey: 'gm-upstream', providerModel: 'gemini-2.5-flash', timeoutMs: 2_000 };
  });
  afterAll(async () => {
    await provider.close();
    await sim.close();
  });

  const withModel = (providerModel: string, overrides: Partial<ChatTarget> = {}): ChatTarget => ({ ...target, providerModel, ...overrides });
  const failure = (method: (typeof methods)[number], req: ChatCompletionRequest, t: ChatTarget) =>
    provider[method]({ ...req, stream: method === 'chatStream' }, t).catch((e: unknown) => e);

  const failures: Array<[string, string, Partial<ChatTarget>, new (...args: never[]) => GatewayError, Record<string, unknown>, boolean]> = [
    ['simulated 400', 'sim-error-400', {}, InputError, { status: 400, message: expect.stringContaining('simulated invalid request') }, false],
    ['recorded 400 INVALID_ARGUMENT', 'sim-fixture-invalid-argument-400', {}, InputError, { status: 400, message: 'Penalty is not enabled for models/gemini-2.5-flash' }, false],
    ['recorded 400 API_KEY_INVALID', 'sim-fixture-api-key-invalid-400', {}, UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
    ['a revoked gateway key', 'gemini-2.5-flash', { apiKey: GEMINI_SIM_INVALID_KEY }, UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
    ['a missing gateway key', 'gemini-2.5-flash', { apiKey: undefined }, UpstreamError, { status: 502, code: 'upstream_auth_error', upstreamStatus: 403 }, false],
    ['recorded 400 FAILED_PRECONDITION', 'sim-fixture-location-400', {}, UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 400 }, false],
    ['simulated 401', 'sim-error-401', {}, UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
    ['simulated 403', 'sim-error-403', {}, UpstreamError, { status: 502, code: 'upstream_auth_error', upstreamStatus: 403 }, false],
    ['recorded 403', 'sim-fixture-unregistered-caller-403', {}, UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
    ['simulated 404', 'sim-error-404', {}, NotFoundError, { status: 404, code: 'model_not_found', param: 'model' }, false],
    ['recorded 404', 'sim-fixture-model-not-found-404', {}, NotFoundError, { status: 404, code: 'model_not_found' }, false],
    ['simulated 429 with Retry-After', 'sim-error-429', {}, RateLimitError, { status: 429, headers: { 'retry-after': '1' } }, true],
    ['recorded 429 with RetryInfo', 'sim-fixture-quota-429', {}, RateLimitError, { status: 429, headers: { 'retry-after': '35' } }, true],
    ['simulated 500', 'sim-error-500', {}, UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 500 }, true],
    ['recorded 500', 'sim-fixture-internal-500', {}, UpstreamError, { status: 502, upstreamStatus: 500 }, true],
    ['recorded 503', 'sim-fixture-overloaded-503', {}, UpstreamError, { status: 502, upstreamStatus: 503 }, true],
    ['HTML 502', 'sim-fixture-html-502', {}, UpstreamError, { status: 502, upstreamStatus: 502 }, true],
    ['simulated 504', 'sim-error-504', {}, TimeoutError, { status: 504 }, true],
  ];

  describe.each(methods)('%s', (method) => {
    it.each(failures)('maps %s', async (_name, model, overrides, type, fields, retryable) => {
      const err = await failure(method, ask(), withModel(model, overrides));
      expect(err).toBeInstanceOf(type);
      expect(err).toMatchObject(fields);
      expect(isRetryableUpstreamError(err)).toBe(retryable);
    });

    it.each([
      ['logit_bias', { logit_bias: { '50256': -100 } }, 'logit_bias'],
      ['an untyped image URL', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/img' } }] }] }, 'messages[0].content[0].image_url.url'],
      ['a non-function tool', { tools: [{ type: 'code_interpreter', function: { name: 'x' } }] }, 'tools[0].type'],
    ])('rejects %s with a 400 naming the param, without calling upstream', async (_name, fields, param) => {
      const before = sim.requests;
      const err = await failure(method, ask(fields as Partial<ChatCompletionRequest>), target);
      expect(err).toBeInstanceOf(InputError);
      expect(err).toMatchObject({ status: 400, param });
      expect(isRetryableUpstreamError(err)).toBe(false);
      expect(sim.requests).toBe(before);
    });

    it('times out with a retryable TimeoutError', async () => {
      const slow = withModel('gemini-2.5-flash', { timeoutMs: 100, extraHeaders: { 'X-Sim-Latency-Ms': '1000' } });
      const started = performance.now();
      const err = await failure(method, ask(), slow);
      expect(err).toBeInstanceOf(TimeoutError);
      expect(isRetryableUpstreamError(err)).toBe(true);
      expect(performance.now() - started).toBeLessThan(900);
    });

    it('reports a refused connection as a retryable 502', async () => {
      const closed = await startGeminiSimulator();
      await closed.close();
      const err = await failure(method, ask(), withModel('gemini-2.5-flash', { baseUrl: closed.baseUrl }));
      expect(err).toBeInstanceOf(UpstreamError);
      expect(err).toMatchObject({ status: 502, code: 'upstream_error' });
      expect(isRetryableUpstreamError(err)).toBe(true);
    });

    it('rethrows the caller cancellation as the caller reason', async () => {
      const controller = new AbortController();
      const reason = new Error('client went away');
      const call = provider[method]({ ...ask(), stream: method === 'chatStream' }, withModel('gemini-2.5-flash', { extraHeaders: { 'x-sim-latency-ms': '1000' } }), controller.signal);
      setTimeout(() => controller.abort(reason), 30);
      await expect(call).rejects.toBe(reason);
    });
  });
});
