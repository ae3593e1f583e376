// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface ReserveResponse {
  /**
   * The amount held for the call (the account's price factor applied).
   */
  'held_micros'?: (number | string | Long);
}

export interface ReserveResponse__Output {
  /**
   * The amount held for the call (the account's price factor applied).
   */
  'held_micros': (number);
}
