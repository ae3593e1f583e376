import { mongo } from 'mongoose';
import { UnavailableError } from '@gw/platform';

/** However alive the server seems, an operation is given up after this many times the silence bound. */
const HARD_CAP_FACTOR = 30;

/**
 * Tells a hung MongoDB server from a slow one. The driver alone would wait on a hung server (a frozen process
 * keeps its connections open) without end, past every caller's deadline. An operation that has had no answer
 * for `silenceMs` is given more time only while the server shows it is alive: it answered another operation
 * meanwhile, or answers a ping within `silenceMs`. So a frozen server fails a call in about twice `silenceMs`,
 * and a busy one (a loaded machine, a large write) is waited for, up to HARD_CAP_FACTOR times `silenceMs`.
 */
export class AnswerBound {
  private lastAnswerAt = 0;

  constructor(
    private readonly silenceMs: number,
    private readonly ping: () => Promise<unknown>,
  ) {}

  /** The operation's outcome, or UnavailableError (503 `store_unavailable`) once the server seems gone. */
  async run<R>(collection: string, op: () => Promise<R>): Promise<R> {
    const startedAt = Date.now();
    const outcome = op().then(
      (value) => { this.answered(); return value; },
      (err: unknown) => {
        // The server's own refusal (a duplicate key...) is an answer; a lost connection is not.
        if (err instanceof mongo.MongoServerError) this.answered();
        throw err;
      },
    );
    // Settled later than we give up: its rejection is no one's to handle.
    outcome.catch(() => undefined);
    for (;;) {
      const windowStart = Date.now();
      if (await settledWithin(outcome, this.silenceMs)) return outcome;
      const waited = Date.now() - startedAt;
      if (waited >= this.silenceMs * HARD_CAP_FACTOR) throw storeUnavailable(collection, `no answer within ${waited} ms`);
      if (this.lastAnswerAt > windowStart) continue;
      const pingedAt = Date.now();
      const pinged = this.ping().then(() => this.answered(), () => undefined);
      await settledWithin(Promise.race([outcome, pinged]), this.silenceMs);
      if (this.lastAnswerAt >= pingedAt) continue;
      throw storeUnavailable(collection, `no answer from the server within ${Date.now() - startedAt} ms`);
    }
  }

  private answered(): void {
    this.lastAnswerAt = Date.now();
  }
}

/** True once `p` has settled (either way), false if `ms` pass first. */
function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  return Promise.race([p.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}

export function storeUnavailable(collection: string, why: string): UnavailableError {
  return new UnavailableError(`The data store is unavailable right now (${collection}: ${why}); try again shortly`, 'store_unavailable');
}
