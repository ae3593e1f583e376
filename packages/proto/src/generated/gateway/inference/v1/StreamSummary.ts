// Original file: ../../protos/gateway/inference/v1/inference.proto

import type { Usage as _gateway_inference_v1_Usage, Usage__Output as _gateway_inference_v1_Usage__Output } from '../../../gateway/inference/v1/Usage';
import type { Cost as _gateway_inference_v1_Cost, Cost__Output as _gateway_inference_v1_Cost__Output } from '../../../gateway/inference/v1/Cost';

export interface StreamSummary {
  /**
   * Token counts the provider reported for the whole stream.
   */
  'usage'?: (_gateway_inference_v1_Usage | null);
  'cost'?: (_gateway_inference_v1_Cost | null);
}

export interface StreamSummary__Output {
  /**
   * Token counts the provider reported for the whole stream.
   */
  'usage': (_gateway_inference_v1_Usage__Output | null);
  'cost': (_gateway_inference_v1_Cost__Output | null);
}
