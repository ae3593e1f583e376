// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface PreauthorizeRequest {
  'account_id'?: (string);
  'key_hash'?: (string);
  'has_key_limit'?: (boolean);
  'key_limit_micros'?: (number | string | Long);
  /**
   * "daily", "weekly", "monthly" or empty.
   */
  'key_limit_reset'?: (string);
}

export interface PreauthorizeRequest__Output {
  'account_id': (string);
  'key_hash': (string);
  'has_key_limit': (boolean);
  'key_limit_micros': (number);
  /**
   * "daily", "weekly", "monthly" or empty.
   */
  'key_limit_reset': (string);
}
