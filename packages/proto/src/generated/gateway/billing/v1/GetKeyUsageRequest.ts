// Original file: ../../protos/gateway/billing/v1/billing.proto


export interface GetKeyUsageRequest {
  'key_hashes'?: (string)[];
}

export interface GetKeyUsageRequest__Output {
  'key_hashes': (string)[];
}
