// Original file: ../../protos/gateway/inference/v1/inference.proto


export interface StreamChatCompletionRequest {
  /**
   * As in CreateChatCompletionRequest; the stream is requested by the RPC, so `stream` may be absent or true.
   * `stream_options.include_usage` decides, as on HTTP, whether the last chunk carries usage.
   */
  'body_json'?: (string);
  /**
   * As in CreateChatCompletionRequest: a completed request_id replays the recorded chunks and summary.
   */
  'request_id'?: (string);
}

export interface StreamChatCompletionRequest__Output {
  /**
   * As in CreateChatCompletionRequest; the stream is requested by the RPC, so `stream` may be absent or true.
   * `stream_options.include_usage` decides, as on HTTP, whether the last chunk carries usage.
   */
  'body_json': (string);
  /**
   * As in CreateChatCompletionRequest: a completed request_id replays the recorded chunks and summary.
   */
  'request_id': (string);
}
