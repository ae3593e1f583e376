import { GatewayError, InputError, NotFoundError, RateLimitError, TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError, type ChatCompletionRequest, type ChatTarget } from '@gw/provider-spec';
// The simulator is this package's upstream in tests; imported by path to keep it out of the runtime deps.
import { GEMINI_SIM_INVALID_KEY, startGeminiSimulator } from '../../../simulators/src';
import { itMapsTransportFailures } from '../testing/chat-transport';
import { expectTypedFailure } from '../testing/collect';
import { useGeminiChatUpstream } from './fixtures/simulator-fixtures';

const ask = (fields: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest => ({ model: 'acme/gem', messages: [{ role: 'user', content: 'hi' }], ...fields });
const methods = ['chat', 'chatStream'] as const;

describe('GeminiChatProvider failures against the Gemini simulator', () => {
  const up = useGeminiChatUpstream();
  const { withModel } = up;
  const failure = (method: (typeof methods)[number], req: ChatCompletionRequest, t: ChatTarget) =>
    up.provider[method]({ ...req, stream: method === 'chatStream' }, t).catch((e: unknown) => e);

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
      expectTypedFailure(err, type, fields, retryable);
    });

    it.each([
      ['logit_bias', { logit_bias: { '50256': -100 } }, 'logit_bias'],
      ['an untyped image URL', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/img' } }] }] }, 'messages[0].content[0].image_url.url'],
      ['a non-function tool', { tools: [{ type: 'code_interpreter', function: { name: 'x' } }] }, 'tools[0].type'],
    ])('rejects %s with a 400 naming the param, without calling upstream', async (_name, fields, param) => {
      const before = up.sim.requests;
      const err = await failure(method, ask(fields as Partial<ChatCompletionRequest>), up.target);
      expect(err).toBeInstanceOf(InputError);
      expect(err).toMatchObject({ status: 400, param });
      expect(isRetryableUpstreamError(err)).toBe(false);
      expect(up.sim.requests).toBe(before);
    });
  });

  itMapsTransportFailures(up, { model: 'gemini-2.5-flash', startSimulator: () => startGeminiSimulator() });
});
