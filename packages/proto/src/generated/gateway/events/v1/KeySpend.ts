// Original file: ../../protos/gateway/events/v1/events.proto

import type { Long } from '@grpc/proto-loader';

export interface KeySpend {
  'key_hash'?: (string);
  'total_micros'?: (number | string | Long);
  'daily_micros'?: (number | string | Long);
  'weekly_micros'?: (number | string | Long);
  'monthly_micros'?: (number | string | Long);
}

export interface KeySpend__Output {
  'key_hash': (string);
  'total_micros': (number);
  'daily_micros': (number);
  'weekly_micros': (number);
  'monthly_micros': (number);
}
