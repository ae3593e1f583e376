import type { CallFailed } from '@gw/proto';
import type { FailedCallRecord, RouteRef } from './billed-call';

/** The bus event of a failed call (gateway.call-failures.v1), the same from every service that makes calls. */
export function callFailedEvent(call: FailedCallRecord<RouteRef, string>, nowMs = Date.now()): CallFailed {
  return {
    request_id: call.requestId,
    account_id: call.identity.accountId,
    key_hash: call.identity.keyHash,
    model: call.model,
    provider: call.route?.providerName ?? '',
    api_type: call.apiType,
    error_kind: call.errorKind,
    status: call.status,
    client_error: call.clientError,
    streamed: call.streamed,
    latency_ms: Math.max(0, nowMs - call.startedAt),
    created_at_ms: call.startedAt,
    trace_id: call.traceId,
  };
}
