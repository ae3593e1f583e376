// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { KeyUsage as _gateway_billing_v1_KeyUsage, KeyUsage__Output as _gateway_billing_v1_KeyUsage__Output } from '../../../gateway/billing/v1/KeyUsage';

export interface GetKeyUsageResponse {
  'usage'?: (_gateway_billing_v1_KeyUsage)[];
}

export interface GetKeyUsageResponse__Output {
  'usage': (_gateway_billing_v1_KeyUsage__Output)[];
}
