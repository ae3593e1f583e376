// Original file: ../../protos/gateway/keys/v1/keys.proto


export interface AuthenticateRequest {
  /**
   * The secret exactly as the caller sent it (without "Bearer ").
   */
  'secret'?: (string);
}

export interface AuthenticateRequest__Output {
  /**
   * The secret exactly as the caller sent it (without "Bearer ").
   */
  'secret': (string);
}
