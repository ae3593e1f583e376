// Original file: ../../protos/gateway/events/v1/events.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One call's archive record: published by the service that made the call, after the response (off its path),
 * unless its ARCHIVE_MODE is off; consumed by billing, which keeps the bodies in its blob store for the owning
 * account, within its retention. Bounded: each body is at most the publisher's ARCHIVE_MAX_BODY_BYTES, so a
 * record fits one bus message. Never carries credentials: only bodies (no headers), with credential-looking
 * fields and values redacted.
 */
export interface CallArchived {
  /**
   * The usage event's request_id (br-<UUIDv4>).
   */
  'request_id'?: (string);
  'account_id'?: (string);
  'key_hash'?: (string);
  /**
   * The usage event's api_type: chat | responses | messages | image | video | transcription | speech | batch
   */
  'api_type'?: (string);
  /**
   * Public model name the caller asked for.
   */
  'model'?: (string);
  /**
   * Provider-facing id, so the archive is found by it too (through the ledger, which indexes it; see `unbilled`).
   */
  'provider_response_id'?: (string);
  'streamed'?: (boolean);
  /**
   * "full": the bodies are here; "metadata": the publisher keeps no bodies (request_json and response_json empty).
   */
  'mode'?: (string);
  /**
   * The request body and the response as JSON text; a stream's response is reassembled into one object.
   * Media bytes are never inlined: binary values and base64 media are replaced by {"omitted": "base64" |
   * "binary", "content_type", "bytes"}, and media the gateway stored is named by its record id (image, video).
   */
  'request_json'?: (string);
  'response_json'?: (string);
  /**
   * A body was longer than the bound: its text is the first ARCHIVE_MAX_BODY_BYTES bytes only (not valid JSON).
   */
  'request_truncated'?: (boolean);
  'response_truncated'?: (boolean);
  'created_at_ms'?: (number | string | Long);
  'trace_id'?: (string);
  /**
   * No usage event is published for this call (a failed video, a batch line that failed), so the ledger cannot
   * resolve its provider id: the archive keeps that id in an index of its own.
   */
  'unbilled'?: (boolean);
}

/**
 * One call's archive record: published by the service that made the call, after the response (off its path),
 * unless its ARCHIVE_MODE is off; consumed by billing, which keeps the bodies in its blob store for the owning
 * account, within its retention. Bounded: each body is at most the publisher's ARCHIVE_MAX_BODY_BYTES, so a
 * record fits one bus message. Never carries credentials: only bodies (no headers), with credential-looking
 * fields and values redacted.
 */
export interface CallArchived__Output {
  /**
   * The usage event's request_id (br-<UUIDv4>).
   */
  'request_id': (string);
  'account_id': (string);
  'key_hash': (string);
  /**
   * The usage event's api_type: chat | responses | messages | image | video | transcription | speech | batch
   */
  'api_type': (string);
  /**
   * Public model name the caller asked for.
   */
  'model': (string);
  /**
   * Provider-facing id, so the archive is found by it too (through the ledger, which indexes it; see `unbilled`).
   */
  'provider_response_id': (string);
  'streamed': (boolean);
  /**
   * "full": the bodies are here; "metadata": the publisher keeps no bodies (request_json and response_json empty).
   */
  'mode': (string);
  /**
   * The request body and the response as JSON text; a stream's response is reassembled into one object.
   * Media bytes are never inlined: binary values and base64 media are replaced by {"omitted": "base64" |
   * "binary", "content_type", "bytes"}, and media the gateway stored is named by its record id (image, video).
   */
  'request_json': (string);
  'response_json': (string);
  /**
   * A body was longer than the bound: its text is the first ARCHIVE_MAX_BODY_BYTES bytes only (not valid JSON).
   */
  'request_truncated': (boolean);
  'response_truncated': (boolean);
  'created_at_ms': (number);
  'trace_id': (string);
  /**
   * No usage event is published for this call (a failed video, a batch line that failed), so the ledger cannot
   * resolve its provider id: the archive keeps that id in an index of its own.
   */
  'unbilled': (boolean);
}
