// Original file: ../../protos/gateway/billing/v1/billing.proto

import type { Long } from '@grpc/proto-loader';

export interface ReserveRequest {
  'account_id'?: (string);
  'key_hash'?: (string);
  'has_key_limit'?: (boolean);
  'key_limit_micros'?: (number | string | Long);
  /**
   * "daily", "weekly", "monthly" or empty.
   */
  'key_limit_reset'?: (string);
  /**
   * The platform request id the call will be billed under.
   */
  'request_id'?: (string);
  /**
   * Every deployment the call may be served by (fallbacks included); the hold prices the most expensive.
   */
  'deployments'?: (string)[];
  /**
   * Upper bounds of the call's tokens.
   */
  'prompt_tokens'?: (number | string | Long);
  'max_output_tokens'?: (number | string | Long);
  /**
   * A spend grant of up to this much (at least the call's worst case, capped by what the account and key
   * have left); 0 holds exactly the call's worst case.
   */
  'grant_micros'?: (number | string | Long);
  /**
   * Upper bounds of a media call's billable quantities (images generated, seconds of audio or video).
   */
  'max_images'?: (number | string | Long);
  'max_audio_seconds'?: (number | string);
  'max_video_seconds'?: (number | string);
}

export interface ReserveRequest__Output {
  'account_id': (string);
  'key_hash': (string);
  'has_key_limit': (boolean);
  'key_limit_micros': (number);
  /**
   * "daily", "weekly", "monthly" or empty.
   */
  'key_limit_reset': (string);
  /**
   * The platform request id the call will be billed under.
   */
  'request_id': (string);
  /**
   * Every deployment the call may be served by (fallbacks included); the hold prices the most expensive.
   */
  'deployments': (string)[];
  /**
   * Upper bounds of the call's tokens.
   */
  'prompt_tokens': (number);
  'max_output_tokens': (number);
  /**
   * A spend grant of up to this much (at least the call's worst case, capped by what the account and key
   * have left); 0 holds exactly the call's worst case.
   */
  'grant_micros': (number);
  /**
   * Upper bounds of a media call's billable quantities (images generated, seconds of audio or video).
   */
  'max_images': (number);
  'max_audio_seconds': (number);
  'max_video_seconds': (number);
}
