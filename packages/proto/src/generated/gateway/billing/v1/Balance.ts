// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface Balance {
  'account_id'?: (string);
  'wallet_micros'?: (number | string | Long);
  'credit_micros'?: (number | string | Long);
  'spendable_micros'?: (number | string | Long);
  /**
   * Enterprise price factor in parts per million (1,000,000 = list price).
   */
  'price_factor_ppm'?: (number | string | Long);
  /**
   * Increases with every change, so caches can drop stale updates.
   */
  'version'?: (number | string | Long);
}

export interface Balance__Output {
  'account_id': (string);
  'wallet_micros': (number);
  'credit_micros': (number);
  'spendable_micros': (number);
  /**
   * Enterprise price factor in parts per million (1,000,000 = list price).
   */
  'price_factor_ppm': (number);
  /**
   * Increases with every change, so caches can drop stale updates.
   */
  'version': (number);
}
