// Original file: ../../protos/gateway/inference/v1/inference.proto


export interface CreateChatCompletionRequest {
  /**
   * The OpenAI chat completion request exactly as it would be POSTed to /v1/chat/completions (JSON text).
   */
  'body_json'?: (string);
  /**
   * Optional, service callers only (an API-key caller sending one is INVALID_ARGUMENT, param `request_id`):
   * the id the call is billed under, `br-<UUIDv4>`. A call whose request_id already completed returns the
   * recorded response (`replayed` true) without calling a provider or billing again; a call whose
   * request_id is still running elsewhere is ALREADY_EXISTS (code `request_in_progress`): retry later.
   * Empty: the gateway makes a new id.
   */
  'request_id'?: (string);
}

export interface CreateChatCompletionRequest__Output {
  /**
   * The OpenAI chat completion request exactly as it would be POSTed to /v1/chat/completions (JSON text).
   */
  'body_json': (string);
  /**
   * Optional, service callers only (an API-key caller sending one is INVALID_ARGUMENT, param `request_id`):
   * the id the call is billed under, `br-<UUIDv4>`. A call whose request_id already completed returns the
   * recorded response (`replayed` true) without calling a provider or billing again; a call whose
   * request_id is still running elsewhere is ALREADY_EXISTS (code `request_in_progress`): retry later.
   * Empty: the gateway makes a new id.
   */
  'request_id': (string);
}
