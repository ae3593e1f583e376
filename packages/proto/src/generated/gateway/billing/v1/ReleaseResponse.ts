// Original file: ../../protos/gateway/billing/v1/billing.proto


export interface ReleaseResponse {
  /**
   * False when there was no hold (already settled, released or expired).
   */
  'released'?: (boolean);
}

export interface ReleaseResponse__Output {
  /**
   * False when there was no hold (already settled, released or expired).
   */
  'released': (boolean);
}
