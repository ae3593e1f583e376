// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface ReserveResponse {
  /**
   * The amount held (the account's price factor applied): the call's worst case, or the grant.
   */
  'held_micros'?: (number | string | Long);
  /**
   * The call's worst case alone, and the factor it was priced with, so a grant's holder can price the
   * next calls against the grant itself.
   */
  'call_micros'?: (number | string | Long);
  'price_factor_ppm'?: (number | string | Long);
}

export interface ReserveResponse__Output {
  /**
   * The amount held (the account's price factor applied): the call's worst case, or the grant.
   */
  'held_micros': (number);
  /**
   * The call's worst case alone, and the factor it was priced with, so a grant's holder can price the
   * next calls against the grant itself.
   */
  'call_micros': (number);
  'price_factor_ppm': (number);
}
