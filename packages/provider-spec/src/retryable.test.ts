import { isRetryableUpstreamError, markRetryable } from './retryable';

describe('retryable tag', () => {
  it.each([
    ['tagged retryable', markRetryable(new Error('x'), true), true],
    ['tagged not retryable', markRetryable(new Error('x'), false), false],
    ['untagged error', new Error('x'), false],
    ['a string', 'retryable', false],
    ['null', null, false],
    ['a look-alike with a truthy non-boolean', { retryable: 'yes' }, false],
  ])('%s', (_name, err, expected) => {
    expect(isRetryableUpstreamError(err)).toBe(expected);
  });

  it('returns the same error and keeps its message', () => {
    const err = new TypeError('boom');
    expect(markRetryable(err, true)).toBe(err);
    expect(err.message).toBe('boom');
  });
});
