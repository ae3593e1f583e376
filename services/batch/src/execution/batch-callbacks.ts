import type { Outbox } from '@gw/bus';
import type { Logger } from '@gw/platform';
import { TOPICS, type CallbackRequested } from '@gw/proto';
import type { Collection } from '@gw/store';
import { isTerminalBatch, toBatchObject, type BatchDoc } from '../batches/batch-records';

/**
 * The batch callback (spec: Events, Batch callback): one `CallbackRequested` per terminal state, delivered
 * by the webhooks service. The terminal write sets `callback_pending`; the event goes through the outbox
 * (durable when the bus is down) and only then is the flag cleared, so a crash in between publishes it again
 * on the next sweep. The event id is stable (`<batch id>:batch.<status>`): webhooks delivers it once.
 */
export class BatchCallbacks {
  constructor(
    private readonly batches: Collection<BatchDoc>,
    private readonly outbox: Pick<Outbox, 'publish'>,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async publish(batch: BatchDoc): Promise<void> {
    if (!batch.callback_pending || !isTerminalBatch(batch.status)) return;
    const event = `batch.${batch.status}`;
    const eventId = `${batch._id}:${event}`;
    const message: CallbackRequested = {
      event_id: eventId, account_id: batch.account_id, kind: 'batch', event, url: batch.callback_url ?? '',
      body_json: JSON.stringify({ ...toBatchObject(batch), event }), signed: true, created_at_ms: this.now(),
      traceparent: batch.traceparent ?? '',
    };
    await this.outbox.publish(TOPICS.callbacks, [{ key: eventId, value: message }]);
    await this.batches.updateOne({ _id: batch._id, status: batch.status, callback_pending: true }, { $set: { callback_pending: false } });
  }

  /** Publishes what a crash left pending; every instance may run it (webhooks deduplicates on the event id). */
  async sweep(): Promise<void> {
    const pending = await this.batches.find({ callback_pending: true }, { limit: 100 });
    for (const batch of pending) {
      await this.publish(batch).catch((err: unknown) => this.logger.warn({ err, batchId: batch._id }, 'publishing a batch callback failed; retrying on the next sweep'));
    }
  }
}
