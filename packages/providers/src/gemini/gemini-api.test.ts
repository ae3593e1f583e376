import { InputError, NotFoundError, RateLimitError, TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError } from '@gw/provider-spec';
import { convertGeminiLogprobs } from './convert-gemini-logprobs';
import { convertGeminiUsage } from './convert-gemini-usage';
import { geminiErrorSchema, geminiResponseSchema } from './gemini-api';
import { mapGeminiHttpError, parseGeminiError } from './gemini-error';
import * as recorded from './fixtures/recorded-gemini-shapes';

describe('Gemini wire schemas accept recorded shapes', () => {
  it.each<[string, unknown]>([
    ['text response', recorded.textResponse],
    ['thought response', recorded.thoughtResponse],
    ['parallel tool call response', recorded.parallelToolCallResponse],
    ['safety-blocked response', recorded.safetyResponse],
    ['blocked prompt', recorded.blockedPromptResponse],
    ['logprobs response', recorded.logprobsResponse],
    ...recorded.textStreamChunks.map((c, i): [string, unknown] => [`text stream event ${i}`, c]),
    ...recorded.toolCallStreamChunks.map((c, i): [string, unknown] => [`tool call stream event ${i}`, c]),
  ])('%s', (_name, body) => {
    expect(geminiResponseSchema.safeParse(body).success).toBe(true);
  });

  it('keeps unknown fields', () => {
    expect(geminiResponseSchema.parse(recorded.blockedPromptResponse).usageMetadata).toHaveProperty('serviceTier', 'standard');
  });

  it.each([
    ['candidates not an array', { candidates: 'none' }],
    ['text not a string', { candidates: [{ content: { parts: [{ text: 5 }] } }] }],
    ['a function call without a name', { candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] }],
  ])('rejects a response with %s', (_name, body) => {
    expect(geminiResponseSchema.safeParse(body).success).toBe(false);
  });

  it.each([
    recorded.invalidArgumentErrorBody,
    recorded.apiKeyInvalidErrorBody,
    recorded.locationErrorBody,
    recorded.unregisteredCallerErrorBody,
    recorded.modelNotFoundErrorBody,
    recorded.quotaErrorBody,
    recorded.internalErrorBody,
    recorded.overloadedErrorBody,
  ])('error body %#', (body) => {
    expect(geminiErrorSchema.safeParse(body).success).toBe(true);
  });
});

describe('parseGeminiError', () => {
  it.each([
    ['a Gemini error body', JSON.stringify(recorded.invalidArgumentErrorBody), { message: recorded.invalidArgumentErrorBody.error.message, status: 'INVALID_ARGUMENT', code: 400 }],
    ['ErrorInfo reason', recorded.apiKeyInvalidErrorBody, { message: expect.any(String), status: 'INVALID_ARGUMENT', code: 400, reason: 'API_KEY_INVALID' }],
    ['RetryInfo delay, rounded up', recorded.quotaErrorBody, { message: expect.any(String), status: 'RESOURCE_EXHAUSTED', code: 429, retryDelaySeconds: 35 }],
    ['HTML', '<html>502 Bad Gateway</html>', {}],
    ['an empty body', '', {}],
    ['JSON of another shape', '{"detail":"nope"}', {}],
  ])('reads %s', (_name, body, expected) => {
    expect(parseGeminiError(body)).toEqual(expected);
  });
});

describe('mapGeminiHttpError', () => {
  it.each([
    ['400 INVALID_ARGUMENT', 400, {}, recorded.invalidArgumentErrorBody, InputError, { status: 400, message: recorded.invalidArgumentErrorBody.error.message, param: null }, false],
    ['400 API_KEY_INVALID is the gateway credential', 400, {}, recorded.apiKeyInvalidErrorBody, UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
    ['400 FAILED_PRECONDITION is the gateway account', 400, {}, recorded.locationErrorBody, UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 400 }, false],
    ['403 PERMISSION_DENIED', 403, {}, recorded.unregisteredCallerErrorBody, UpstreamError, { status: 502, code: 'upstream_auth_error' }, false],
    ['404 NOT_FOUND', 404, {}, recorded.modelNotFoundErrorBody, NotFoundError, { status: 404, code: 'model_not_found', param: 'model' }, false],
    ['429 with Retry-After', 429, { 'retry-after': '7' }, recorded.quotaErrorBody, RateLimitError, { status: 429, headers: { 'retry-after': '7' } }, true],
    ['429 with RetryInfo only', 429, {}, recorded.quotaErrorBody, RateLimitError, { status: 429, headers: { 'retry-after': '35' } }, true],
    ['429 with neither', 429, {}, { error: { code: 429, status: 'RESOURCE_EXHAUSTED' } }, RateLimitError, { status: 429, headers: {} }, true],
    ['500 INTERNAL', 500, {}, recorded.internalErrorBody, UpstreamError, { status: 502, code: 'upstream_error', upstreamStatus: 500 }, true],
    ['503 UNAVAILABLE', 503, {}, recorded.overloadedErrorBody, UpstreamError, { status: 502, upstreamStatus: 503 }, true],
    ['504 DEADLINE_EXCEEDED', 504, {}, {}, TimeoutError, { status: 504 }, true],
  ])('%s', (_name, status, headers, body, type, fields, retryable) => {
    const err = mapGeminiHttpError(status, headers, parseGeminiError(body));
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject(fields);
    expect(isRetryableUpstreamError(err)).toBe(retryable);
  });

  it('keeps upstream messages of credential and server failures to itself', () => {
    expect(mapGeminiHttpError(400, {}, parseGeminiError(recorded.apiKeyInvalidErrorBody)).message).not.toContain('API key not valid');
    expect(mapGeminiHttpError(500, {}, parseGeminiError(recorded.internalErrorBody)).message).not.toContain('developers.generativeai');
  });
});

describe('convertGeminiUsage', () => {
  it.each([
    ['answer plus thoughts as completion', { promptTokenCount: 9, candidatesTokenCount: 28, thoughtsTokenCount: 244, totalTokenCount: 281 }, { prompt_tokens: 9, completion_tokens: 272, total_tokens: 281 }],
    ['no thoughts', { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 }, { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 }],
    ['a blocked prompt', { promptTokenCount: 9, totalTokenCount: 9 }, { prompt_tokens: 9, total_tokens: 9 }],
    ['nothing', undefined, {}],
  ])('%s', (_name, usage, expected) => {
    expect(convertGeminiUsage(usage, undefined)).toEqual(expected);
  });

  it('adds the provider request id', () => {
    expect(convertGeminiUsage({}, 'resp-1')).toEqual({ provider_request_id: 'resp-1' });
  });
});

describe('convertGeminiLogprobs', () => {
  it('converts chosen tokens and their alternatives to OpenAI logprobs', () => {
    expect(convertGeminiLogprobs(recorded.logprobsResponse.candidates[0].logprobsResult)).toEqual({
      content: [
        { token: 'Hello', logprob: -0.0012, bytes: [72, 101, 108, 108, 111], top_logprobs: [{ token: 'Hello', logprob: -0.0012, bytes: [72, 101, 108, 108, 111] }, { token: 'Hi', logprob: -6.75, bytes: [72, 105] }] },
        { token: ' there', logprob: -0.1242, bytes: [32, 116, 104, 101, 114, 101], top_logprobs: [{ token: ' there', logprob: -0.1242, bytes: [32, 116, 104, 101, 114, 101] }, { token: '!', logprob: -2.25, bytes: [33] }] },
      ],
    });
  });

  it.each([[undefined], [null], [{}], [{ chosenCandidates: [] }]])('is null without chosen tokens: %j', (result) => {
    expect(convertGeminiLogprobs(result)).toBeNull();
  });
});
