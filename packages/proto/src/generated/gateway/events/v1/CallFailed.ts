// Original file: ../../protos/gateway/events/v1/events.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One call that failed without a usage event of its own: refused (spend) or failed before a provider answered
 * (provider errors and rate limits after retries and fallback, timeouts, no route). Published by the service
 * that made the call, through its outbox; consumed by billing's statistics, which count each request_id once.
 * A stream that fails after its first byte is not one of these: its usage event says `status: "failed"`.
 */
export interface CallFailed {
  'request_id'?: (string);
  'account_id'?: (string);
  'key_hash'?: (string);
  /**
   * The catalogue's model id the call was for.
   */
  'model'?: (string);
  /**
   * The provider tried last; empty when none was (refused before routing).
   */
  'provider'?: (string);
  /**
   * chat | responses | messages | image | video | transcription | speech | batch
   */
  'api_type'?: (string);
  /**
   * The error's code as the caller saw it (e.g. upstream_error, timeout, rate_limit_exceeded, insufficient_balance).
   */
  'error_kind'?: (string);
  /**
   * The HTTP status the call failed with.
   */
  'status'?: (number);
  /**
   * The caller's own failure (a refusal it can fix: 4xx other than 408 and 429, 501), counted apart from errors.
   */
  'client_error'?: (boolean);
  'streamed'?: (boolean);
  'latency_ms'?: (number | string | Long);
  'created_at_ms'?: (number | string | Long);
  'trace_id'?: (string);
}

/**
 * One call that failed without a usage event of its own: refused (spend) or failed before a provider answered
 * (provider errors and rate limits after retries and fallback, timeouts, no route). Published by the service
 * that made the call, through its outbox; consumed by billing's statistics, which count each request_id once.
 * A stream that fails after its first byte is not one of these: its usage event says `status: "failed"`.
 */
export interface CallFailed__Output {
  'request_id': (string);
  'account_id': (string);
  'key_hash': (string);
  /**
   * The catalogue's model id the call was for.
   */
  'model': (string);
  /**
   * The provider tried last; empty when none was (refused before routing).
   */
  'provider': (string);
  /**
   * chat | responses | messages | image | video | transcription | speech | batch
   */
  'api_type': (string);
  /**
   * The error's code as the caller saw it (e.g. upstream_error, timeout, rate_limit_exceeded, insufficient_balance).
   */
  'error_kind': (string);
  /**
   * The HTTP status the call failed with.
   */
  'status': (number);
  /**
   * The caller's own failure (a refusal it can fix: 4xx other than 408 and 429, 501), counted apart from errors.
   */
  'client_error': (boolean);
  'streamed': (boolean);
  'latency_ms': (number);
  'created_at_ms': (number);
  'trace_id': (string);
}
