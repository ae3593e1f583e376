/**
 * Whether retrying the same call (on this or another upstream) may succeed. Providers tag the errors they
 * throw; kept as a plain property so this package needs no error classes of its own.
 */
export interface RetryableTag {
  readonly retryable: boolean;
}

export function markRetryable<E extends Error>(err: E, retryable: boolean): E & RetryableTag {
  Object.defineProperty(err, 'retryable', { value: retryable, enumerable: false, writable: false });
  return err as E & RetryableTag;
}

/** True for rate limits, upstream 5xx, connection failures and timeouts; false for anything untagged. */
export function isRetryableUpstreamError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Partial<RetryableTag>).retryable === true;
}
