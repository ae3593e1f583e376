// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { RequestCharge as _gateway_billing_v1_RequestCharge, RequestCharge__Output as _gateway_billing_v1_RequestCharge__Output } from '../../../gateway/billing/v1/RequestCharge';

export interface GetRequestChargesResponse {
  'charges'?: (_gateway_billing_v1_RequestCharge)[];
}

export interface GetRequestChargesResponse__Output {
  'charges': (_gateway_billing_v1_RequestCharge__Output)[];
}
