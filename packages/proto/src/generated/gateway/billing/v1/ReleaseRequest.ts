// Original file: ../../protos/gateway/billing/v1/billing.proto


export interface ReleaseRequest {
  'account_id'?: (string);
  'request_id'?: (string);
}

export interface ReleaseRequest__Output {
  'account_id': (string);
  'request_id': (string);
}
