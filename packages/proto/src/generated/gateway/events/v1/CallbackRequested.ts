// Original file: ../../protos/gateway/events/v1/events.proto

import type { Long } from '@grpc/proto-loader';

/**
 * A callback the gateway owes a caller: published by the service whose job reached a terminal state (batch,
 * video); consumed by the webhooks service, which turns it into one durable delivery job per event_id.
 * Delivery policy by kind (the spec's): batch 10 s per attempt, video 30 s; both 3 attempts with 1 s then
 * 3 s between them; any 2xx stops, redirects are followed through the address guard, then it gives up.
 */
export interface CallbackRequested {
  /**
   * Stable id of this callback: the delivery job's id (a republished event makes no second delivery), the
   * `webhook-id` header, and what receivers deduplicate on. E.g. `<batch_id>:batch.completed`.
   */
  'event_id'?: (string);
  'account_id'?: (string);
  /**
   * "batch" | "video": picks the delivery policy.
   */
  'kind'?: (string);
  /**
   * The event name, e.g. `batch.completed`, `video.failed`; shown in the delivery log.
   */
  'event'?: (string);
  /**
   * Where to deliver; empty = the account's default webhook URL (batches only; a video always gives one).
   * Checked with the address guard when the caller accepted it and again at every delivery hop.
   */
  'url'?: (string);
  /**
   * The exact JSON body to send; signatures cover these bytes.
   */
  'body_json'?: (string);
  /**
   * Sign with the account's webhook secret when it has one (batches: true; videos: never, per the spec).
   */
  'signed'?: (boolean);
  'created_at_ms'?: (number | string | Long);
  /**
   * The W3C traceparent of the request that raised the event (the batch's create, the video's submit, the
   * test event's), so the delivery joins that trace. Empty when tracing is off; never sent to the receiver.
   */
  'traceparent'?: (string);
}

/**
 * A callback the gateway owes a caller: published by the service whose job reached a terminal state (batch,
 * video); consumed by the webhooks service, which turns it into one durable delivery job per event_id.
 * Delivery policy by kind (the spec's): batch 10 s per attempt, video 30 s; both 3 attempts with 1 s then
 * 3 s between them; any 2xx stops, redirects are followed through the address guard, then it gives up.
 */
export interface CallbackRequested__Output {
  /**
   * Stable id of this callback: the delivery job's id (a republished event makes no second delivery), the
   * `webhook-id` header, and what receivers deduplicate on. E.g. `<batch_id>:batch.completed`.
   */
  'event_id': (string);
  'account_id': (string);
  /**
   * "batch" | "video": picks the delivery policy.
   */
  'kind': (string);
  /**
   * The event name, e.g. `batch.completed`, `video.failed`; shown in the delivery log.
   */
  'event': (string);
  /**
   * Where to deliver; empty = the account's default webhook URL (batches only; a video always gives one).
   * Checked with the address guard when the caller accepted it and again at every delivery hop.
   */
  'url': (string);
  /**
   * The exact JSON body to send; signatures cover these bytes.
   */
  'body_json': (string);
  /**
   * Sign with the account's webhook secret when it has one (batches: true; videos: never, per the spec).
   */
  'signed': (boolean);
  'created_at_ms': (number);
  /**
   * The W3C traceparent of the request that raised the event (the batch's create, the video's submit, the
   * test event's), so the delivery joins that trace. Empty when tracing is off; never sent to the receiver.
   */
  'traceparent': (string);
}
