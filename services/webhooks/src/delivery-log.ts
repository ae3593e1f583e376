import { DuplicateKeyError, listPage, type Collection, type ListPage, type PageQuery, type Store } from '@gw/store';

/**
 * One delivery attempt, as the account's delivery log shows it. Written `sending` before the request leaves
 * and finished after, so an instance that dies mid-attempt leaves a record the next one counts.
 */
export interface DeliveryAttemptDoc {
  /** `{event_id}:{attempt}`: an attempt is recorded once whoever makes it. */
  _id: string;
  account_id: string;
  event_id: string;
  event: string;
  url: string;
  attempt: number;
  state: 'sending' | 'succeeded' | 'failed';
  response_status: number | null;
  latency_ms: number | null;
  error: string | null;
  started_at_ms: number;
  finished_at_ms: number | null;
}

export class DeliveryLog {
  private constructor(private readonly attempts: Collection<DeliveryAttemptDoc>) {}

  static over(store: Store): DeliveryLog {
    return new DeliveryLog(store.collection<DeliveryAttemptDoc>('webhook_deliveries'));
  }

  async ensureIndexes(): Promise<void> {
    await this.attempts.ensureIndex({ fields: { account_id: 1, started_at_ms: -1 } });
    await this.attempts.ensureIndex({ fields: { event_id: 1, attempt: 1 } });
  }

  /** The attempts made so far for one event, in order. */
  of(eventId: string): Promise<DeliveryAttemptDoc[]> {
    return this.attempts.find({ event_id: eventId }, { sort: { attempt: 1 } });
  }

  /** Records that an attempt starts; false when that attempt number was already taken (another worker made it). */
  async start(doc: Omit<DeliveryAttemptDoc, '_id' | 'state' | 'response_status' | 'latency_ms' | 'error' | 'finished_at_ms'>): Promise<string | null> {
    const _id = `${doc.event_id}:${doc.attempt}`;
    try {
      await this.attempts.insertOne({ _id, ...doc, state: 'sending', response_status: null, latency_ms: null, error: null, finished_at_ms: null });
      return _id;
    } catch (err) {
      if (err instanceof DuplicateKeyError) return null;
      throw err;
    }
  }

  async finish(id: string, outcome: { succeeded: boolean; responseStatus: number | null; latencyMs: number; error: string | null; atMs: number }): Promise<void> {
    await this.attempts.updateOne({ _id: id, state: 'sending' }, {
      $set: {
        state: outcome.succeeded ? 'succeeded' : 'failed', response_status: outcome.responseStatus,
        latency_ms: outcome.latencyMs, error: outcome.error, finished_at_ms: outcome.atMs,
      },
    });
  }

  /** An attempt whose instance died before it finished counts as a failed one. */
  async markInterrupted(id: string, atMs: number): Promise<void> {
    await this.attempts.updateOne({ _id: id, state: 'sending' }, {
      $set: { state: 'failed', error: 'interrupted: the delivering instance stopped before an answer', finished_at_ms: atMs },
    });
  }

  /** The account's attempts, newest first unless `query` asks for oldest first, as the other lists page. */
  list<T extends { id: string }>(accountId: string, query: PageQuery, view: (attempt: DeliveryAttemptDoc) => T): Promise<ListPage<T>> {
    return listPage(this.attempts, { account_id: accountId }, query, view, 'started_at_ms');
  }
}
