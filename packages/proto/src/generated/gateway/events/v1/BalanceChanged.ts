// Original file: ../../protos/gateway/events/v1/events.proto

import type { KeySpend as _gateway_events_v1_KeySpend, KeySpend__Output as _gateway_events_v1_KeySpend__Output } from '../../../gateway/events/v1/KeySpend';
import type { Long } from '@grpc/proto-loader';

export interface BalanceChanged {
  'account_id'?: (string);
  'spendable_micros'?: (number | string | Long);
  'price_factor_ppm'?: (number | string | Long);
  'version'?: (number | string | Long);
  /**
   * Keys whose spend changed with this update and their spend in the current day, week, month.
   */
  'keys'?: (_gateway_events_v1_KeySpend)[];
}

export interface BalanceChanged__Output {
  'account_id': (string);
  'spendable_micros': (number);
  'price_factor_ppm': (number);
  'version': (number);
  /**
   * Keys whose spend changed with this update and their spend in the current day, week, month.
   */
  'keys': (_gateway_events_v1_KeySpend__Output)[];
}
