// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Balance as _gateway_billing_v1_Balance, Balance__Output as _gateway_billing_v1_Balance__Output } from '../../../gateway/billing/v1/Balance';
import type { Long } from '@grpc/proto-loader';

export interface PreauthorizeResponse {
  'balance'?: (_gateway_billing_v1_Balance | null);
  /**
   * Spend of the key in its current limit period.
   */
  'key_period_usage_micros'?: (number | string | Long);
}

export interface PreauthorizeResponse__Output {
  'balance': (_gateway_billing_v1_Balance__Output | null);
  /**
   * Spend of the key in its current limit period.
   */
  'key_period_usage_micros': (number);
}
