// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface KeyUsage {
  'key_hash'?: (string);
  'total_micros'?: (number | string | Long);
  'daily_micros'?: (number | string | Long);
  'weekly_micros'?: (number | string | Long);
  'monthly_micros'?: (number | string | Long);
}

export interface KeyUsage__Output {
  'key_hash': (string);
  'total_micros': (number);
  'daily_micros': (number);
  'weekly_micros': (number);
  'monthly_micros': (number);
}
