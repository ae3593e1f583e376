// Original file: ../../protos/gateway/inference/v1/inference.proto

import type { Usage as _gateway_inference_v1_Usage, Usage__Output as _gateway_inference_v1_Usage__Output } from '../../../gateway/inference/v1/Usage';
import type { Cost as _gateway_inference_v1_Cost, Cost__Output as _gateway_inference_v1_Cost__Output } from '../../../gateway/inference/v1/Cost';

export interface CreateChatCompletionResponse {
  /**
   * The gateway request id the call is billed under (the billing lookup finds it).
   */
  'request_id'?: (string);
  /**
   * The chat completion object exactly as the HTTP route returns it (JSON text).
   */
  'completion_json'?: (string);
  /**
   * Token counts the provider reported.
   */
  'usage'?: (_gateway_inference_v1_Usage | null);
  /**
   * What the call costs, computed with billing's price function.
   */
  'cost'?: (_gateway_inference_v1_Cost | null);
  /**
   * True when this is the recorded response of an earlier call with the same request_id.
   */
  'replayed'?: (boolean);
}

export interface CreateChatCompletionResponse__Output {
  /**
   * The gateway request id the call is billed under (the billing lookup finds it).
   */
  'request_id': (string);
  /**
   * The chat completion object exactly as the HTTP route returns it (JSON text).
   */
  'completion_json': (string);
  /**
   * Token counts the provider reported.
   */
  'usage': (_gateway_inference_v1_Usage__Output | null);
  /**
   * What the call costs, computed with billing's price function.
   */
  'cost': (_gateway_inference_v1_Cost__Output | null);
  /**
   * True when this is the recorded response of an earlier call with the same request_id.
   */
  'replayed': (boolean);
}
