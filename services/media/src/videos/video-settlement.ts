import type { Outbox } from '@gw/bus';
import type { Logger } from '@gw/platform';
import { TOPICS, type CallbackRequested, type UsageEvent } from '@gw/proto';
import type { Collection } from '@gw/store';
import type { SignedUrls } from '../signed-urls';
import { toVideoObject } from './video-object';
import { isTerminalVideo, type VideoDoc } from './video-records';

/**
 * What a terminal video owes: billing's usage event (completed videos, per second of video) and the caller's
 * callback (when it gave a `callback_url`). The terminal write sets `usage_pending` / `callback_pending`; each
 * event goes through the outbox (durable while the bus is down) and only then is its flag cleared, so a crash
 * in between publishes it again on the next sweep. Both are idempotent downstream: billing records one
 * ledger entry per `request_id`, webhooks one delivery per `event_id` (`<video id>:<status>`).
 */
export class VideoSettlement {
  constructor(
    private readonly videos: Collection<VideoDoc>,
    private readonly outbox: Pick<Outbox, 'publish'>,
    private readonly urls: SignedUrls,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async settle(video: VideoDoc): Promise<void> {
    if (video.usage_pending && video.status === 'completed') await this.publishUsage(video);
    if (video.callback_pending && isTerminalVideo(video.status)) await this.publishCallback(video);
  }

  /** Settles what a crash left pending; every instance may run it. */
  async sweep(): Promise<void> {
    const pending = await this.videos.find({ $or: [{ usage_pending: true }, { callback_pending: true }] }, { limit: 100 });
    for (const video of pending) {
      await this.settle(video).catch((err: unknown) => this.logger.warn({ err, videoId: video._id }, 'settling a video failed; retrying on the next sweep'));
    }
  }

  private async publishUsage(video: VideoDoc): Promise<void> {
    const now = this.now();
    const event: UsageEvent = {
      request_id: video.request_id,
      account_id: video.account_id,
      key_hash: video.key_hash,
      model: video.model,
      provider: video.provider_name ?? '',
      deployment: video.deployment_id ?? '',
      api_type: 'video',
      // The provider's task id and the gateway's video id: the billing lookup resolves both (and the request id).
      provider_response_id: video.provider_task_id ?? '',
      served_model: video.model,
      streamed: false,
      cancelled: false,
      finish_reason: 'completed',
      status: 'succeeded',
      usage: { ...video.usage } as UsageEvent['usage'],
      latency_ms: (video.completed_at_ms ?? now) - video.created_at_ms,
      generation_time_ms: (video.completed_at_ms ?? now) - video.created_at_ms,
      created_at_ms: video.created_at_ms,
      usage_estimated: false,
      hold_id: '',
      hold_micros: 0,
      media_ids: [video._id],
      trace_id: video.trace_id,
    };
    await this.outbox.publish(TOPICS.usage, [{ key: video.account_id, value: event }]);
    await this.videos.updateOne({ _id: video._id, usage_pending: true }, { $set: { usage_pending: false } });
  }

  private async publishCallback(video: VideoDoc): Promise<void> {
    const eventId = `${video._id}:${video.status}`;
    const body = {
      id: video._id,
      status: video.status,
      payload: toVideoObject(video, this.urls),
      ...(video.caller_request_id ? { request_id: video.caller_request_id } : {}),
      ...(video.status === 'failed' ? { error: video.error } : {}),
    };
    const message: CallbackRequested = {
      event_id: eventId, account_id: video.account_id, kind: 'video', event: `video.${video.status}`, url: video.callback_url ?? '',
      body_json: JSON.stringify(body), signed: false, created_at_ms: this.now(),
      traceparent: video.traceparent ?? '',
    };
    await this.outbox.publish(TOPICS.callbacks, [{ key: eventId, value: message }]);
    await this.videos.updateOne({ _id: video._id, callback_pending: true }, { $set: { callback_pending: false } });
  }
}
