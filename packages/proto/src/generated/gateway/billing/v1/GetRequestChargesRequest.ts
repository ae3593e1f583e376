// Original file: ../../protos/gateway/billing/v1/billing.proto


export interface GetRequestChargesRequest {
  'account_id'?: (string);
  /**
   * At most 1,000 ids.
   */
  'request_ids'?: (string)[];
}

export interface GetRequestChargesRequest__Output {
  'account_id': (string);
  /**
   * At most 1,000 ids.
   */
  'request_ids': (string)[];
}
