// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface ReleaseRequest {
  'account_id'?: (string);
  'request_id'?: (string);
  /**
   * A spend grant's holder retiring it (no call will be added to it): gives back unused_micros, what none of
   * its calls will use; the calls' postings settle the rest and the last one drops the grant. False: drop
   * the whole hold.
   */
  'retire_grant'?: (boolean);
  'unused_micros'?: (number | string | Long);
}

export interface ReleaseRequest__Output {
  'account_id': (string);
  'request_id': (string);
  /**
   * A spend grant's holder retiring it (no call will be added to it): gives back unused_micros, what none of
   * its calls will use; the calls' postings settle the rest and the last one drops the grant. False: drop
   * the whole hold.
   */
  'retire_grant': (boolean);
  'unused_micros': (number);
}
