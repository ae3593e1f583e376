import { InputError, NotFoundError, PayloadTooLargeError, RateLimitError, TimeoutError, UpstreamError } from '@gw/platform';
import { isRetryableUpstreamError } from '@gw/provider-spec';
import { mapUpstreamHttpError } from './upstream-errors';

describe('mapUpstreamHttpError', () => {
  const detail = { message: 'Invalid value for messages', param: 'messages', code: 'invalid_value' };
  it.each([
    [400, detail, InputError, 400, 'invalid_value', false],
    [422, {}, InputError, 400, 'invalid_request', false],
    [413, {}, PayloadTooLargeError, 413, 'payload_too_large', false],
    [401, detail, UpstreamError, 502, 'upstream_auth_error', false],
    [403, {}, UpstreamError, 502, 'upstream_auth_error', false],
    [402, {}, UpstreamError, 502, 'upstream_insufficient_balance', false],
    [404, {}, NotFoundError, 404, 'model_not_found', false],
    [408, {}, TimeoutError, 504, 'timeout', true],
    [429, {}, RateLimitError, 429, 'rate_limit_exceeded', true],
    [429, { code: 'insufficient_quota' }, UpstreamError, 502, 'upstream_insufficient_balance', false],
    [500, {}, UpstreamError, 502, 'upstream_error', true],
    [502, {}, UpstreamError, 502, 'upstream_error', true],
    [503, {}, UpstreamError, 502, 'upstream_error', true],
    [504, {}, TimeoutError, 504, 'timeout', true],
    [409, {}, UpstreamError, 502, 'upstream_error', false],
    [302, {}, UpstreamError, 502, 'upstream_error', false],
  ])('HTTP %i %j -> %p %i %s', (upstream, d, type, status, code, retryable) => {
    const err = mapUpstreamHttpError(upstream, {}, d);
    expect(err).toBeInstanceOf(type);
    expect(err).toMatchObject({ status, code });
    expect(isRetryableUpstreamError(err)).toBe(retryable);
  });

  it('passes the upstream message and param on for a 400', () => {
    expect(mapUpstreamHttpError(400, {}, detail)).toMatchObject({ message: detail.message, param: 'messages' });
  });

  it('keeps upstream messages of credential and server failures to itself', () => {
    const secretish = { message: 'Incorrect API key provided: sk-****abcd' };
    expect(mapUpstreamHttpError(401, {}, secretish).message).not.toContain('sk-');
    expect(mapUpstreamHttpError(500, {}, secretish).message).not.toContain('sk-');
  });

  it('records the upstream status on upstream errors', () => {
    expect(mapUpstreamHttpError(503, {}, {})).toMatchObject({ upstreamStatus: 503 });
    expect(mapUpstreamHttpError(401, {}, {})).toMatchObject({ upstreamStatus: 401 });
  });

  it('passes Retry-After on with a 429', () => {
    expect(mapUpstreamHttpError(429, { 'retry-after': '7' }, {}).headers).toEqual({ 'retry-after': '7' });
    expect(mapUpstreamHttpError(429, {}, {}).headers).toEqual({});
  });
});
