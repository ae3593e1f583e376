import { randomUUID } from 'node:crypto';
import { ConflictError, type Logger } from '@gw/platform';
import { DuplicateKeyError, type Collection, type Doc, type Store } from '@gw/store';

export const RECORDED_CALLS_COLLECTION = 'inference_recorded_calls';

/** A recorded response is at most this large (JSON); a larger one is not kept, and a retry runs the call again. */
export const MAX_RECORDED_BYTES = 8 * 1024 * 1024;

export interface CallUsage { prompt_tokens: number; completion_tokens: number; total_tokens: number }
export interface CallCost { priced: boolean; list_micros: number; charged_micros: number }

/** What a call with a caller-chosen request id answered, as the gRPC API sends it again. */
export type RecordedResponse =
  | { method: 'unary'; completion_json: string; usage: CallUsage; cost: CallCost }
  /** `ended_early`: cancelled or failed after it started, billed for what it generated; a retry cannot run it again. */
  | { method: 'stream'; chunks: string[]; usage: CallUsage; cost: CallCost; ended_early: boolean };

export type CallMethod = RecordedResponse['method'];

interface RecordedCallDoc extends Doc {
  account_id: string;
  method: CallMethod;
  state: 'running' | 'completed';
  /** The claim running the call (one per attempt). */
  owner: string;
  lease_until_ms: number;
  /** Deleted by the sweeper after this. */
  expires_at_ms: number;
  response?: RecordedResponse;
}

/** One attempt's hold on a request id while its call runs. */
export interface CallClaim {
  /** Records the response for retries and ends the claim. */
  complete(response: RecordedResponse): Promise<void>;
  /** The call failed (nothing billed): the id is free for a retry at once. */
  abandon(): Promise<void>;
}

export type Admission = { kind: 'replay'; response: RecordedResponse } | { kind: 'run'; claim: CallClaim };

export interface RecordedCallsOptions {
  store: Store;
  logger: Logger;
  leaseMs: number;
  retentionMs: number;
  sweepMs: number;
  now?: () => number;
}

/**
 * Idempotency of gRPC calls by request id, which the batch fan-out relies on: the first call with an id
 * claims it (a lease renewed while the call runs), a completed call's response is kept for `retentionMs` and
 * answers every retry, and a retry while the call runs elsewhere is refused (`request_in_progress`). A claim
 * whose instance died lapses and the next retry runs the call again; its usage is billed under the same id,
 * which billing counts once.
 */
export class RecordedCalls {
  private readonly calls: Collection<RecordedCallDoc>;
  private readonly now: () => number;
  private readonly leases = new Set<NodeJS.Timeout>();
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly opts: RecordedCallsOptions) {
    this.calls = opts.store.collection<RecordedCallDoc>(RECORDED_CALLS_COLLECTION);
    this.now = opts.now ?? Date.now;
  }

  async ensureIndexes(): Promise<void> {
    await this.calls.ensureIndex({ fields: { expires_at_ms: 1 } });
  }

  /** Replays the response recorded for `requestId`, or claims it for this call. */
  async admit(requestId: string, accountId: string, method: CallMethod): Promise<Admission> {
    const owner = randomUUID();
    const now = this.now();
    const existing = await this.calls.findOne({ _id: requestId });
    if (existing?.state === 'completed') return this.replay(existing, accountId, method);
    try {
      await this.calls.insertOne({
        _id: requestId, account_id: accountId, method, state: 'running', owner,
        lease_until_ms: now + this.opts.leaseMs, expires_at_ms: now + this.opts.retentionMs,
      });
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      // Someone holds the id: take it over only if their claim lapsed (their instance died mid-call).
      const taken = await this.calls.findOneAndUpdate(
        { _id: requestId, state: 'running', account_id: accountId, method, lease_until_ms: { $lt: now } },
        { $set: { owner, lease_until_ms: now + this.opts.leaseMs, expires_at_ms: now + this.opts.retentionMs } },
      );
      if (!taken) {
        const current = await this.calls.findOne({ _id: requestId });
        if (current?.state === 'completed') return this.replay(current, accountId, method);
        if (current && (current.account_id !== accountId || current.method !== method)) throw idInUse();
        throw new ConflictError(`A call with request_id ${requestId} is still running; retry later`, 'request_in_progress');
      }
    }
    return { kind: 'run', claim: this.claim(requestId, owner) };
  }

  /** Deletes recorded responses (and claims of calls that never finished) past their retention. */
  async sweep(): Promise<number> {
    return this.calls.deleteMany({ expires_at_ms: { $lt: this.now() } });
  }

  start(): void {
    this.sweeper = setInterval(() => {
      this.sweeping = this.sweep().then(
        (n) => { if (n > 0) this.opts.logger.info({ deleted: n }, 'recorded gRPC responses past retention deleted'); },
        (err: unknown) => this.opts.logger.warn({ err }, 'recorded-call sweep failed; retrying next interval'),
      );
    }, this.opts.sweepMs);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    for (const t of this.leases) clearInterval(t);
    this.leases.clear();
    await this.sweeping;
  }

  private replay(doc: RecordedCallDoc, accountId: string, method: CallMethod): Admission {
    if (doc.account_id !== accountId || doc.method !== method || !doc.response) throw idInUse();
    if (doc.response.method === 'stream' && doc.response.ended_early) {
      throw new ConflictError('The call with this request_id ended before it completed and was billed for what it generated', 'request_id_spent');
    }
    return { kind: 'replay', response: doc.response };
  }

  private claim(requestId: string, owner: string): CallClaim {
    const mine = { _id: requestId, owner, state: 'running' };
    const renew = setInterval(() => {
      this.calls.updateOne(mine, { $set: { lease_until_ms: this.now() + this.opts.leaseMs } })
        .catch((err: unknown) => this.opts.logger.warn({ err, requestId }, 'renewing a request_id claim failed; retrying'));
    }, Math.max(1, Math.floor(this.opts.leaseMs / 3)));
    renew.unref();
    this.leases.add(renew);
    const release = () => { clearInterval(renew); this.leases.delete(renew); };
    return {
      complete: async (response) => {
        release();
        if (Buffer.byteLength(JSON.stringify(response)) > MAX_RECORDED_BYTES) {
          this.opts.logger.warn({ requestId }, 'response too large to record; a retry with its request_id runs the call again');
          await this.calls.deleteOne(mine);
          return;
        }
        await this.calls.updateOne(mine, { $set: { state: 'completed', response, expires_at_ms: this.now() + this.opts.retentionMs } });
      },
      abandon: async () => {
        release();
        await this.calls.deleteOne(mine);
      },
    };
  }
}

const idInUse = () => new ConflictError('request_id was already used for another call', 'request_id_conflict');
