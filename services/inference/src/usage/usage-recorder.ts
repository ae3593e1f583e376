import { callFailedEvent, untilFlushed, untilSent, type CallHold, type FailedCallRecord, type OpenCall, type OpenCallJournal, type OpenCallStart, type RouteRef } from '@gw/billed-call';
import type { TypedPublisher } from '@gw/bus';
import { TOPICS, type TopicMessages, type UsageEvent } from '@gw/proto';
import type { Deployment } from '@gw/catalog';
import type { Metrics } from '@gw/platform';
import type { Usage } from '@gw/provider-spec';

export interface CallRecord {
  requestId: string;
  hold: CallHold;
  accountId: string;
  keyHash: string;
  model: string;
  providerName: string;
  deployment: Deployment;
  apiType: 'chat' | 'responses' | 'messages';
  providerResponseId: string;
  servedModel: string;
  streamed: boolean;
  cancelled: boolean;
  /** A stream that broke after its first byte: billed, and counted as a failed call. */
  failed: boolean;
  finishReason: string;
  usage: Usage;
  startedAt: number;
  firstByteAt: number;
  traceId: string;
}

/**
 * Turns a finished call into a usage event and hands it to the batching publisher (outbox-backed, so an
 * unavailable bus delays the event but never loses it); billing computes the charge and settles the call's hold.
 */
export class UsageRecorder {
  constructor(
    private readonly publisher: TypedPublisher<TopicMessages>,
    private readonly journal: OpenCallJournal,
    /** Where latency, time to first token and tokens are counted (the service's /metrics). */
    private readonly metrics: Metrics | null = null,
  ) {}

  /**
   * Journals a stream (written by `sendingTo` before each provider attempt), so its usage is billed, estimated,
   * even if this instance dies mid-stream. Close it right after recording the stream's usage; discard it when
   * no attempt produced a stream.
   */
  openStream(start: OpenCallStart): OpenCall {
    return this.journal.begin(start);
  }

  /**
   * Enqueues the call's usage event; resolves once the outbox has it (bounded by `USAGE_DURABLE_WAIT_MS`), so
   * a unary answer that waits for it is never lost with a process killed right after answering. A unary call's
   * event is sent at once; a stream's waits for the publisher's next batch, as its journal entry (removed only
   * once the event is sent) covers it meanwhile.
   */
  record(call: CallRecord): Promise<void> {
    const now = Date.now();
    const event: UsageEvent = {
      request_id: call.requestId,
      account_id: call.accountId,
      key_hash: call.keyHash,
      model: call.model,
      provider: call.providerName,
      deployment: call.deployment.id,
      api_type: call.apiType,
      provider_response_id: call.providerResponseId,
      served_model: call.servedModel,
      streamed: call.streamed,
      cancelled: call.cancelled,
      finish_reason: call.finishReason,
      status: call.failed ? 'failed' : 'succeeded',
      usage: { ...call.usage } as UsageEvent['usage'],
      latency_ms: now - call.startedAt,
      generation_time_ms: now - call.firstByteAt,
      created_at_ms: call.startedAt,
      usage_estimated: false,
      hold_id: call.hold.grant ? call.hold.holdId : '',
      hold_micros: call.hold.grant ? call.hold.micros : 0,
      media_ids: [],
      trace_id: call.traceId,
    };
    this.publisher.enqueue(TOPICS.usage, { key: call.accountId, value: event });
    this.observe(call, now);
    return call.streamed ? untilSent(this.publisher) : untilFlushed(this.publisher);
  }

  /** A call that failed without usage: counted by billing's statistics (through the outbox, like usage). */
  failed(call: FailedCallRecord<RouteRef, string>): void {
    this.publisher.enqueue(TOPICS.callFailures, { key: call.identity.accountId, value: callFailedEvent(call) });
  }

  private observe(call: CallRecord, now: number): void {
    if (!this.metrics) return;
    const labels = { model: call.model, provider: call.providerName };
    const { calls } = this.metrics;
    calls.latency.observe(labels, (now - call.startedAt) / 1000);
    calls.timeToFirstToken.observe(labels, Math.max(0, call.firstByteAt - call.startedAt) / 1000);
    const input = call.usage.prompt_tokens ?? call.usage.input_tokens ?? 0;
    const output = call.usage.completion_tokens ?? call.usage.output_tokens ?? 0;
    if (input > 0) calls.tokens.inc({ ...labels, kind: 'input' }, input);
    if (output > 0) calls.tokens.inc({ ...labels, kind: 'output' }, output);
  }
}
