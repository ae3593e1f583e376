// Original file: ../../protos/gateway/events/v1/events.proto


export interface KeyChanged {
  'key_hash'?: (string);
  /**
   * "updated" or "deleted".
   */
  'change'?: (string);
}

export interface KeyChanged__Output {
  'key_hash': (string);
  /**
   * "updated" or "deleted".
   */
  'change': (string);
}
