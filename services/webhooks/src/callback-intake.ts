import type { JobStore } from '@gw/jobs';
import { traceIdOfTraceparent, type Logger } from '@gw/platform';
import { subscribeInBackground, type BackgroundSubscription, type TypedBus } from '@gw/bus';
import { TOPICS, type TopicMessages } from '@gw/proto';
import { z } from 'zod';
import type { DeliveryPayload, DeliveryResult } from './delivery';
import { isCallbackKind, type CallbackKind } from './delivery-policy';
import type { SettingsStore } from './settings-store';

export const CALLBACK_CONSUMER_GROUP = 'webhooks-delivery';

/** A delivery job outlives any plausible outage before a worker starts it; past this it is not sent at all. */
const DELIVERY_START_WINDOW_MS = 24 * 3600_000;

/** proto3 JSON: int64 may be a number or a decimal string. */
const int64 = z.union([z.number(), z.string().regex(/^-?\d+$/)]).transform(Number).pipe(z.number().int());

/** The JSON encoding of `CallbackRequested` (proto3: a field at its zero value may be absent). */
export const callbackRequestedSchema = z.object({
  event_id: z.string().min(1).max(256),
  account_id: z.string().min(1),
  // Checked against the delivery policies where it is used: an unknown kind is reported, not parsed away.
  kind: z.string().min(1),
  event: z.string().min(1),
  url: z.string().nullish().transform((v) => v ?? ''),
  body_json: z.string().min(1),
  signed: z.boolean().nullish().transform((v) => v ?? false),
  created_at_ms: int64.nullish().transform((v) => v ?? 0),
  // Only a well-formed W3C traceparent is kept; anything else is dropped (the delivery starts a trace of its
  // own), never the event with it.
  traceparent: z.string().nullish().transform((v) => (v && traceIdOfTraceparent(v) ? v.trim() : '')),
});
export type CallbackRequest = Omit<z.infer<typeof callbackRequestedSchema>, 'kind'> & { kind: CallbackKind };

/**
 * Turns callback events into delivery jobs: one per `event_id` (the job id), so an event published or
 * consumed twice, or by two instances, is delivered once.
 */
export class CallbackIntake {
  constructor(
    private readonly jobs: JobStore<DeliveryPayload, DeliveryResult>,
    private readonly settings: SettingsStore,
    private readonly wake: () => void,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The job's payload, or null when there is nowhere to deliver (no URL and no account default). */
  async accept(event: CallbackRequest): Promise<DeliveryPayload | null> {
    const url = event.url || (await this.settings.get(event.account_id))?.url || null;
    if (url === null) {
      this.logger.info({ eventId: event.event_id, accountId: event.account_id, event: event.event }, 'no callback URL and no default webhook; nothing to deliver');
      return null;
    }
    const payload: DeliveryPayload = {
      event_id: event.event_id, account_id: event.account_id, kind: event.kind, event: event.event, url, body_json: event.body_json, signed: event.signed,
      traceparent: event.traceparent || null,
    };
    const { job, created } = await this.jobs.enqueue({ id: event.event_id, payload, ownerId: event.account_id, expiresAtMs: this.now() + DELIVERY_START_WINDOW_MS });
    if (created) this.wake();
    return job.payload;
  }
}

/** Consumes `gateway.callbacks.v1` in the background; a malformed event is logged with its position and skipped. */
export function startCallbackConsumer(bus: TypedBus<TopicMessages>, intake: CallbackIntake, logger: Logger): BackgroundSubscription {
  return subscribeInBackground(bus, {
    topics: [TOPICS.callbacks],
    group: CALLBACK_CONSUMER_GROUP,
    handleBatch: async (messages) => {
      for (const m of messages) {
        const parsed = callbackRequestedSchema.safeParse(m.value);
        const problem = parsed.success
          ? (isCallbackKind(parsed.data.kind) ? null : `kind: unknown callback kind ${JSON.stringify(parsed.data.kind)}`)
          : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
        if (!parsed.success || problem !== null) {
          logger.error({ topic: m.topic, partition: m.partition, offset: m.offset, problem }, 'malformed callback event skipped');
          continue;
        }
        await intake.accept({ ...parsed.data, kind: parsed.data.kind as CallbackKind });
      }
    },
  }, logger);
}
