// Original file: ../../protos/gateway/inference/v1/inference.proto

import type { StreamSummary as _gateway_inference_v1_StreamSummary, StreamSummary__Output as _gateway_inference_v1_StreamSummary__Output } from '../../../gateway/inference/v1/StreamSummary';

export interface StreamChatCompletionResponse {
  /**
   * The gateway request id the call is billed under; the same on every message of a call.
   */
  'request_id'?: (string);
  /**
   * One chat.completion.chunk object exactly as the HTTP route sends it in a `data:` line (JSON text).
   */
  'chunk_json'?: (string);
  /**
   * The last message of a stream that ended normally.
   */
  'summary'?: (_gateway_inference_v1_StreamSummary | null);
  /**
   * True when the call's messages are the recorded ones of an earlier call with the same request_id.
   */
  'replayed'?: (boolean);
  'event'?: "chunk_json"|"summary";
}

export interface StreamChatCompletionResponse__Output {
  /**
   * The gateway request id the call is billed under; the same on every message of a call.
   */
  'request_id': (string);
  /**
   * One chat.completion.chunk object exactly as the HTTP route sends it in a `data:` line (JSON text).
   */
  'chunk_json'?: (string);
  /**
   * The last message of a stream that ended normally.
   */
  'summary'?: (_gateway_inference_v1_StreamSummary__Output | null);
  /**
   * True when the call's messages are the recorded ones of an earlier call with the same request_id.
   */
  'replayed': (boolean);
  'event'?: "chunk_json"|"summary";
}
