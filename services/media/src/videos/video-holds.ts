import type { CatalogModel } from '@gw/catalog';
import { callUnary, type Identity, type Logger } from '@gw/platform';
import { type BillingServiceClient, type ReleaseRequest, type ReleaseResult, type ReserveRequest, type ReserveResult } from '@gw/proto';

/**
 * A video's spend hold in billing, taken before the video is accepted (so a caller without the balance or key
 * limit gets its 402 at once) under the video's own request id. The completed video's usage event settles it
 * (billing matches it by that request id); a failed video releases it; one nothing settles expires in billing.
 */
export class VideoHolds {
  constructor(private readonly billing: BillingServiceClient, private readonly logger: Logger) {}

  /** Holds the most the video may cost: `maxSeconds` at the dearest deployment that may serve it. */
  async reserve(identity: Identity, requestId: string, deployments: string[], maxSeconds: number, traceId: string): Promise<void> {
    await callUnary<ReserveRequest, ReserveResult>(this.billing, this.billing.Reserve, {
      account_id: identity.accountId, key_hash: identity.keyHash, has_key_limit: identity.keyLimitMicros !== null,
      key_limit_micros: identity.keyLimitMicros ?? 0, key_limit_reset: identity.keyLimitReset ?? '', request_id: requestId, deployments,
      prompt_tokens: 0, max_output_tokens: 0, grant_micros: 0, max_images: 0, max_audio_seconds: 0, max_video_seconds: maxSeconds,
    }, { traceId });
  }

  /** Best effort: a hold nothing releases expires. */
  release(accountId: string, requestId: string, traceId: string): void {
    void callUnary<ReleaseRequest, ReleaseResult>(this.billing, this.billing.Release, { account_id: accountId, request_id: requestId }, { traceId })
      .catch((err: unknown) => this.logger.warn({ err, requestId }, 'releasing a video spend hold failed; billing expires it'));
  }
}

/**
 * The longest video a request may produce: its own duration, else the largest the model's schema allows
 * (its `max`, its largest option, or its default, whichever is larger).
 */
export function maxVideoSeconds(model: CatalogModel, duration: unknown): number {
  if (typeof duration === 'number' && Number.isFinite(duration) && duration > 0) return duration;
  const spec = model.parameter_schema.duration;
  if (!spec) return 0;
  const candidates = [spec.max, typeof spec.default === 'number' ? spec.default : null, ...(spec.options ?? []).filter((o): o is number => typeof o === 'number')];
  return Math.max(0, ...candidates.filter((c): c is number => typeof c === 'number'));
}
