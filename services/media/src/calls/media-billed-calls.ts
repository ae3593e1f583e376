import { BilledCalls, callFailedEvent, untilFlushed, type CallHold, type MeasuredUsage, type OpenCallJournal, type StreamJournal } from '@gw/billed-call';
import type { BatchingPublisher } from '@gw/bus';
import { callUnary, type Identity, type Logger } from '@gw/platform';
import { TOPICS, type BillingServiceClient, type ReleaseRequest, type ReleaseResult, type ReserveRequest, type ReserveResult, type UsageEvent } from '@gw/proto';
import type { Usage } from '@gw/provider-spec';
import type { MediaKind, MediaRoute, MediaRouter } from './media-routes';

/** What a media call may cost at most, in the quantities billing prices. */
export interface MediaBounds {
  promptTokens: number;
  outputTokens: number;
  images: number;
  audioSeconds: number;
  videoSeconds: number;
}

/** One media call as the lifecycle carries it: the routes that may serve it and its worst case. */
export interface MediaPlan {
  routes: MediaRoute[];
  bounds: MediaBounds;
}

/** Usage with the gateway's ids of what the call produced (resolvable by the billing lookup). */
export interface MediaUsage extends Usage {
  media_ids?: string[];
}

export type MediaBilledCalls = BilledCalls<MediaRoute, MediaKind, MediaUsage, MediaPlan>;

/**
 * The billed-call lifecycle for media: a spend hold in billing (gRPC Reserve with the media bounds) before the
 * provider is called, routes with fallback, and the usage event (through the outbox-backed publisher) that
 * settles the hold. Streams (image partials, transcript deltas, speech audio) are in the open-call journal with
 * the usage they measured so far, so a stream whose instance dies is billed that, once, by whichever instance
 * finds its lease lapsed.
 */
export function mediaBilledCalls(deps: { billing: BillingServiceClient; router: MediaRouter; publisher: BatchingPublisher; journal: OpenCallJournal; logger: Logger }): MediaBilledCalls {
  const { billing, router, publisher, journal, logger } = deps;
  return new BilledCalls<MediaRoute, MediaKind, MediaUsage, MediaPlan>({
    holds: {
      reserve: async (identity, requestId, plan, traceId) => reserve(billing, identity, requestId, plan, traceId),
      release: (identity, hold, traceId) => {
        void callUnary<ReleaseRequest, ReleaseResult>(billing, billing.Release, { account_id: identity.accountId, request_id: hold.holdId }, { traceId })
          .catch((err: unknown) => logger.warn({ err, holdId: hold.holdId }, 'spend hold release failed; billing expires it'));
      },
    },
    router: { attempt: (plan, send, log) => router.attempt(plan.routes, send, log) },
    usage: {
      record: (call) => {
        const now = Date.now();
        const { mediaIds, usage } = eventUsage(call.usage ?? {});
        const event: UsageEvent = {
          request_id: call.requestId, account_id: call.identity.accountId, key_hash: call.identity.keyHash, model: call.model,
          provider: call.route.providerName, deployment: call.route.deployment.id, api_type: call.apiType,
          provider_response_id: call.providerResponseId, served_model: call.servedModel, streamed: call.streamed, cancelled: call.cancelled,
          finish_reason: call.finishReason, status: call.failed ? 'failed' : 'succeeded', usage: usage as UsageEvent['usage'],
          latency_ms: now - call.startedAt, generation_time_ms: now - call.firstByteAt, created_at_ms: call.startedAt, usage_estimated: false,
          hold_id: call.hold.grant ? call.hold.holdId : '', hold_micros: call.hold.grant ? call.hold.micros : 0, media_ids: mediaIds,
          trace_id: call.traceId,
        };
        publisher.enqueue(TOPICS.usage, { key: call.identity.accountId, value: event });
        return untilFlushed(publisher);
      },
      failed: (call) => publisher.enqueue(TOPICS.callFailures, { key: call.identity.accountId, value: callFailedEvent(call) }),
      // Media lines measure what they deliver: the journal bills that, never a text estimate (none is `{}`, zero).
      openStream: ({ usage: opening, ...start }): StreamJournal<MediaUsage> => {
        const call = journal.begin({ ...start, usage: eventUsage(opening ?? {}).usage });
        return {
          sendingTo: (provider, deployment) => call.sendingTo(provider, deployment),
          noteOutput: (chars, { usage: measured, ...ids }) => {
            const soFar = measured ? eventUsage(measured) : null;
            call.noteOutput(chars, { ...ids, ...(soFar ? { usage: soFar.usage, mediaIds: soFar.mediaIds } : {}) });
          },
          discard: () => call.discard(),
          close: () => call.close(),
        };
      },
    },
    logger,
  });
}

/** A media usage in the usage event's terms: the ids of what was produced travel beside it, not in it. */
function eventUsage(usage: MediaUsage): { usage: MeasuredUsage; mediaIds: string[] } {
  const { media_ids: mediaIds = [], ...rest } = usage;
  return { usage: rest as MeasuredUsage, mediaIds };
}

async function reserve(billing: BillingServiceClient, id: Identity, requestId: string, plan: MediaPlan, traceId: string): Promise<CallHold> {
  const res = await callUnary<ReserveRequest, ReserveResult>(billing, billing.Reserve, {
    account_id: id.accountId, key_hash: id.keyHash, has_key_limit: id.keyLimitMicros !== null, key_limit_micros: id.keyLimitMicros ?? 0,
    key_limit_reset: id.keyLimitReset ?? '', request_id: requestId, deployments: plan.routes.map((r) => r.deployment.id),
    prompt_tokens: plan.bounds.promptTokens, max_output_tokens: plan.bounds.outputTokens, grant_micros: 0,
    max_images: plan.bounds.images, max_audio_seconds: plan.bounds.audioSeconds, max_video_seconds: plan.bounds.videoSeconds,
  }, { traceId });
  return { holdId: requestId, micros: Number(res.held_micros), grant: false };
}
