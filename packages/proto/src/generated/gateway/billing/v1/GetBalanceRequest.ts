// Original file: ../../protos/gateway/billing/v1/billing.proto


export interface GetBalanceRequest {
  'account_id'?: (string);
}

export interface GetBalanceRequest__Output {
  'account_id': (string);
}
