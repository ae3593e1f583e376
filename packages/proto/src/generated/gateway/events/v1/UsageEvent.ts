// Original file: ../../protos/gateway/events/v1/events.proto

import type { Usage as _gateway_events_v1_Usage, Usage__Output as _gateway_events_v1_Usage__Output } from '../../../gateway/events/v1/Usage';
import type { Long } from '@grpc/proto-loader';

/**
 * One billable call. Published by the service that made the call; consumed idempotently by billing
 * (request_id is unique in the ledger).
 */
export interface UsageEvent {
  /**
   * br-<UUIDv4>, made by the platform.
   */
  'request_id'?: (string);
  'account_id'?: (string);
  'key_hash'?: (string);
  /**
   * Public model name the caller asked for.
   */
  'model'?: (string);
  /**
   * Provider and deployment that served the call; billing prices by them.
   */
  'provider'?: (string);
  'deployment'?: (string);
  /**
   * chat | responses | messages | image | video | transcription | speech | batch
   */
  'api_type'?: (string);
  /**
   * Provider-facing id (completion, response, message or media id), resolvable by the billing lookup.
   */
  'provider_response_id'?: (string);
  /**
   * Model snapshot the provider reported.
   */
  'served_model'?: (string);
  'streamed'?: (boolean);
  'cancelled'?: (boolean);
  'finish_reason'?: (string);
  /**
   * "succeeded" or "failed".
   */
  'status'?: (string);
  'usage'?: (_gateway_events_v1_Usage | null);
  'latency_ms'?: (number | string | Long);
  'generation_time_ms'?: (number | string | Long);
  'created_at_ms'?: (number | string | Long);
  /**
   * True when the service that made the call died before the provider's usage was known: the usage is the
   * gateway's estimate of what was generated (recovered from its open-call journal).
   */
  'usage_estimated'?: (boolean);
  /**
   * The spend hold the call ran under when it is not its own (a spend grant), and the call's share of it,
   * which the posting of this event settles. Empty: the hold, if any, is under request_id.
   */
  'hold_id'?: (string);
  'hold_micros'?: (number | string | Long);
  /**
   * The gateway's own ids of what the call produced (image record ids): the billing lookup resolves each of
   * them to this call, beside request_id and provider_response_id.
   */
  'media_ids'?: (string)[];
  /**
   * W3C trace id (32 lowercase hex) of the request that made the call: joins the billing record and the
   * archive to the logs and the trace. Empty when the call had none.
   */
  'trace_id'?: (string);
}

/**
 * One billable call. Published by the service that made the call; consumed idempotently by billing
 * (request_id is unique in the ledger).
 */
export interface UsageEvent__Output {
  /**
   * br-<UUIDv4>, made by the platform.
   */
  'request_id': (string);
  'account_id': (string);
  'key_hash': (string);
  /**
   * Public model name the caller asked for.
   */
  'model': (string);
  /**
   * Provider and deployment that served the call; billing prices by them.
   */
  'provider': (string);
  'deployment': (string);
  /**
   * chat | responses | messages | image | video | transcription | speech | batch
   */
  'api_type': (string);
  /**
   * Provider-facing id (completion, response, message or media id), resolvable by the billing lookup.
   */
  'provider_response_id': (string);
  /**
   * Model snapshot the provider reported.
   */
  'served_model': (string);
  'streamed': (boolean);
  'cancelled': (boolean);
  'finish_reason': (string);
  /**
   * "succeeded" or "failed".
   */
  'status': (string);
  'usage': (_gateway_events_v1_Usage__Output | null);
  'latency_ms': (number);
  'generation_time_ms': (number);
  'created_at_ms': (number);
  /**
   * True when the service that made the call died before the provider's usage was known: the usage is the
   * gateway's estimate of what was generated (recovered from its open-call journal).
   */
  'usage_estimated': (boolean);
  /**
   * The spend hold the call ran under when it is not its own (a spend grant), and the call's share of it,
   * which the posting of this event settles. Empty: the hold, if any, is under request_id.
   */
  'hold_id': (string);
  'hold_micros': (number);
  /**
   * The gateway's own ids of what the call produced (image record ids): the billing lookup resolves each of
   * them to this call, beside request_id and provider_response_id.
   */
  'media_ids': (string)[];
  /**
   * W3C trace id (32 lowercase hex) of the request that made the call: joins the billing record and the
   * archive to the logs and the trace. Empty when the call had none.
   */
  'trace_id': (string);
}
