// Original file: ../../protos/gateway/events/v1/events.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Token and media usage as the provider reported it, normalized to the spec's Usage fields.
 */
export interface Usage {
  'prompt_tokens'?: (number | string | Long);
  'completion_tokens'?: (number | string | Long);
  'total_tokens'?: (number | string | Long);
  'input_tokens'?: (number | string | Long);
  'output_tokens'?: (number | string | Long);
  'generated_images'?: (number | string | Long);
  'audio_duration_seconds'?: (number | string);
  'video_duration_seconds'?: (number | string);
  'provider_request_id'?: (string);
  '_prompt_tokens'?: "prompt_tokens";
  '_completion_tokens'?: "completion_tokens";
  '_total_tokens'?: "total_tokens";
  '_input_tokens'?: "input_tokens";
  '_output_tokens'?: "output_tokens";
  '_generated_images'?: "generated_images";
  '_audio_duration_seconds'?: "audio_duration_seconds";
  '_video_duration_seconds'?: "video_duration_seconds";
  '_provider_request_id'?: "provider_request_id";
}

/**
 * Token and media usage as the provider reported it, normalized to the spec's Usage fields.
 */
export interface Usage__Output {
  'prompt_tokens'?: (number);
  'completion_tokens'?: (number);
  'total_tokens'?: (number);
  'input_tokens'?: (number);
  'output_tokens'?: (number);
  'generated_images'?: (number);
  'audio_duration_seconds'?: (number);
  'video_duration_seconds'?: (number);
  'provider_request_id'?: (string);
  '_prompt_tokens'?: "prompt_tokens";
  '_completion_tokens'?: "completion_tokens";
  '_total_tokens'?: "total_tokens";
  '_input_tokens'?: "input_tokens";
  '_output_tokens'?: "output_tokens";
  '_generated_images'?: "generated_images";
  '_audio_duration_seconds'?: "audio_duration_seconds";
  '_video_duration_seconds'?: "video_duration_seconds";
  '_provider_request_id'?: "provider_request_id";
}
