import type { BatchingPublisher } from '@gw/bus';
import { tokenCostMicros, usdToMicros } from '@gw/platform';
import { TOPICS, type UsageEvent } from '@gw/proto';
import type { Deployment } from '@gw/catalog';
import type { Usage } from '@gw/provider-spec';
import type { OpenCall, OpenCallJournal, OpenCallStart } from './open-call-journal';

export interface CallRecord {
  requestId: string;
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
  finishReason: string;
  usage: Usage;
  startedAt: number;
  firstByteAt: number;
}

/**
 * Turns a finished call into a usage event and hands it to the batching publisher (outbox-backed, so an
 * unavailable bus delays the event but never loses it). Returns the list cost estimate for the local
 * spend guard; billing computes the authoritative charge.
 */
export class UsageRecorder {
  constructor(private readonly publisher: BatchingPublisher, private readonly journal: OpenCallJournal) {}

  /**
   * Journals a stream (written by `sendingTo` before each provider attempt), so its usage is billed, estimated,
   * even if this instance dies mid-stream. Close it right after recording the stream's usage; discard it when
   * no attempt produced a stream.
   */
  openStream(start: OpenCallStart): OpenCall {
    return this.journal.begin(start);
  }

  record(call: CallRecord): number {
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
      status: 'succeeded',
      usage: { ...call.usage } as UsageEvent['usage'],
      latency_ms: now - call.startedAt,
      generation_time_ms: now - call.firstByteAt,
      created_at_ms: call.startedAt,
      usage_estimated: false,
    };
    this.publisher.enqueue(TOPICS.usage, { key: call.accountId, value: event });
    return estimateListCost(call.deployment, call.usage);
  }
}

export function estimateListCost(d: Deployment, usage: Usage): number {
  const prompt = usage.prompt_tokens ?? usage.input_tokens ?? 0;
  const completion = usage.completion_tokens ?? usage.output_tokens ?? 0;
  return tokenCostMicros(prompt, usdToMicros(d.price.prompt_per_million))
    + tokenCostMicros(completion, usdToMicros(d.price.completion_per_million))
    + (d.price.per_request ? usdToMicros(d.price.per_request) : 0);
}
