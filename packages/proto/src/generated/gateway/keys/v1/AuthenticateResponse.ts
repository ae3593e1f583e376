// Original file: ../../protos/gateway/keys/v1/keys.proto

import type { Long } from '@grpc/proto-loader';

export interface AuthenticateResponse {
  'account_id'?: (string);
  /**
   * Hex SHA-256 of the secret: the key's public identifier.
   */
  'key_hash'?: (string);
  'is_management'?: (boolean);
  /**
   * Spending limit in USD micro-units; meaningful only when has_limit.
   */
  'limit_micros'?: (number | string | Long);
  'has_limit'?: (boolean);
  /**
   * "daily", "weekly", "monthly" or empty for a limit that never resets.
   */
  'limit_reset'?: (string);
  /**
   * Unix milliseconds; 0 = never expires.
   */
  'expires_at_ms'?: (number | string | Long);
  /**
   * The key's own rate limits per minute; 0 = the gateway's configured default.
   */
  'requests_per_minute'?: (number | string | Long);
  'tokens_per_minute'?: (number | string | Long);
}

export interface AuthenticateResponse__Output {
  'account_id': (string);
  /**
   * Hex SHA-256 of the secret: the key's public identifier.
   */
  'key_hash': (string);
  'is_management': (boolean);
  /**
   * Spending limit in USD micro-units; meaningful only when has_limit.
   */
  'limit_micros': (number);
  'has_limit': (boolean);
  /**
   * "daily", "weekly", "monthly" or empty for a limit that never resets.
   */
  'limit_reset': (string);
  /**
   * Unix milliseconds; 0 = never expires.
   */
  'expires_at_ms': (number);
  /**
   * The key's own rate limits per minute; 0 = the gateway's configured default.
   */
  'requests_per_minute': (number);
  'tokens_per_minute': (number);
}
