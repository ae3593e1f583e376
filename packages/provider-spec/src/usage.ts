/** Normalized usage (spec: Usage). Every field is optional and present only when the provider reported it. */
export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  /** For providers that report input/output names. */
  input_tokens?: number;
  output_tokens?: number;
  generated_images?: number;
  audio_duration_seconds?: number;
  video_duration_seconds?: number;
  /** Upstream correlation id. */
  provider_request_id?: string;
}
