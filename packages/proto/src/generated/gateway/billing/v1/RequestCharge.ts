// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface RequestCharge {
  'request_id'?: (string);
  'list_micros'?: (number | string | Long);
  'charged_micros'?: (number | string | Long);
}

export interface RequestCharge__Output {
  'request_id': (string);
  'list_micros': (number);
  'charged_micros': (number);
}
