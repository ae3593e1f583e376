// Original file: ../../protos/gateway/inference/v1/inference.proto

import type { Long } from '@grpc/proto-loader';

export interface Cost {
  /**
   * False when the deployment that served the call has no price: it is billed nothing, both amounts are 0.
   */
  'priced'?: (boolean);
  /**
   * List price of the call at the deployment that served it.
   */
  'list_micros'?: (number | string | Long);
  /**
   * What the account is charged: list x the account's price factor (the amount billing posts).
   */
  'charged_micros'?: (number | string | Long);
}

export interface Cost__Output {
  /**
   * False when the deployment that served the call has no price: it is billed nothing, both amounts are 0.
   */
  'priced': (boolean);
  /**
   * List price of the call at the deployment that served it.
   */
  'list_micros': (number);
  /**
   * What the account is charged: list x the account's price factor (the amount billing posts).
   */
  'charged_micros': (number);
}
