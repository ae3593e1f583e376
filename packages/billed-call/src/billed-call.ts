import { lazyChild, newRequestId, toGatewayError, type Identity, type Logger } from '@gw/platform';

/**
 * The billed call: one lifecycle for every line that calls a provider for an account (chat, responses,
 * messages; images, audio, video and batch plug in the same way):
 *
 *   prepare (the line's own validation) → authorize (a spend hold) → request id → route with fallback
 *   → usage → settle (the usage event, which settles the hold in billing) → finish, exactly once.
 *
 * A failure before the provider answered releases the hold, bills nothing and is reported (for the statistics);
 * a stream that fails after its first byte bills what was generated, marked failed; a stream is journaled before
 * each provider attempt (so a stream this instance cannot finish is still billed) and its finish bills what
 * was generated, also after the client left. The lifecycle knows nothing of any line's formats: a line gives
 * its `apiType`, how to send to a route, and how to read usage from what came back.
 */

/** Where a call went: enough to journal and bill it. */
export interface RouteRef {
  providerName: string;
  deployment: { id: string };
}

/** What a finished call produced, read by the line's usage extractor. */
export interface CallOutcome<U> {
  /** `null`: the provider reported none (recorded as zero, and logged). */
  usage: U | null;
  providerResponseId: string;
  servedModel: string;
  finishReason: string;
}

/** The spend hold a call runs under: its own (`holdId` = its request id) or its share of a spend grant. */
export interface CallHold {
  holdId: string;
  micros: number;
  /** A share of a spend grant (its usage event names the grant), not a hold of its own. */
  grant: boolean;
}

/** One settled call, handed to the usage port. */
export interface BilledCallRecord<R extends RouteRef, A extends string, U> {
  requestId: string;
  identity: Identity;
  /** Named in the usage event, whose posting settles it. */
  hold: CallHold;
  /** The public model the call was billed under. */
  model: string;
  apiType: A;
  route: R;
  providerResponseId: string;
  servedModel: string;
  finishReason: string;
  usage: U | null;
  streamed: boolean;
  cancelled: boolean;
  /** A stream that failed after its first byte: billed for what it generated, and counted as a failed call. */
  failed: boolean;
  startedAt: number;
  firstByteAt: number;
  /** The trace id of the request that made the call, carried into its billing record. */
  traceId: string;
}

/**
 * A call that ended without an answer to bill: refused by its spend hold, or failed at every route it tried.
 * Reported once per call for the statistics; `clientError` separates what the caller can fix from failures.
 */
export interface FailedCallRecord<R extends RouteRef, A extends string> {
  requestId: string;
  identity: Pick<Identity, 'accountId' | 'keyHash'>;
  model: string;
  apiType: A;
  /** The route tried last; null when the call was refused before any. */
  route: R | null;
  /** The error's code and HTTP status, as the caller saw them. */
  errorKind: string;
  status: number;
  clientError: boolean;
  streamed: boolean;
  startedAt: number;
  traceId: string;
}

export interface JournalStart<A extends string, U = unknown> {
  requestId: string;
  traceId: string;
  hold: CallHold;
  accountId: string;
  keyHash: string;
  model: string;
  apiType: A;
  startedAt: number;
  promptChars: number;
  /** The stream's `openingUsage`, for lines that measure their usage. */
  usage?: U;
}

/** A stream's durable record while it runs (the open-call journal). */
export interface StreamJournal<U = unknown> {
  /** Written before each provider attempt, naming where the request goes. */
  sendingTo(providerName: string, deploymentId: string): Promise<void>;
  noteOutput(chars: number, progress: { providerResponseId: string; servedModel: string; usage?: U }): void;
  /** No attempt produced a stream: nothing to bill. */
  discard(): void;
  /** The stream's usage is recorded: the journal entry is no longer needed. */
  close(): void;
}

/**
 * What the lifecycle runs on. `Plan` is the line's own description of a call (its model, its bounds, which
 * routes serve it), passed through untouched to the hold and the router.
 */
export interface BilledCallPorts<R extends RouteRef, A extends string, U, Plan> {
  holds: {
    /**
     * Holds the call's worst case, or throws the refusal. `ownHold`: under `requestId` itself, idempotent
     * (a call whose id was made earlier, an async job's re-run); otherwise it may be a share of a spend grant.
     */
    reserve(identity: Identity, requestId: string, plan: Plan, traceId: string, ownHold: boolean): Promise<CallHold>;
    /** Best effort: a hold nothing settles expires. */
    release(identity: Identity, hold: CallHold, traceId: string): void;
  };
  router: {
    /** Sends to the plan's routes in order, falling back on retryable failures before the first byte. */
    attempt<T>(plan: Plan, send: (route: R) => Promise<T>, log: Logger): Promise<{ result: T; route: R }>;
  };
  usage: {
    /**
     * Hands the call's usage event on. A promise resolves once the event is durable (in the outbox): a unary
     * call answers only then, so a process killed right after answering has not lost its charge.
     */
    record(call: BilledCallRecord<R, A, U>): void | Promise<void>;
    /** A call that failed without usage (best effort, off the caller's path). */
    failed(call: FailedCallRecord<R, A>): void;
    openStream(start: JournalStart<A, U>): StreamJournal<U>;
  };
  logger: Logger;
}

export interface CallSpec<A extends string, Plan> {
  apiType: A;
  identity: Identity;
  traceId: string;
  /** The public model id billed. */
  model: string;
  plan: Plan;
  /** Bill under an id made earlier (an async job's, the same on every re-run); otherwise a new one. */
  requestId?: string;
}

export interface UnaryCallSpec<R, A extends string, Plan, T, U> extends CallSpec<A, Plan> {
  send(route: R, requestId: string): Promise<T>;
  usageOf(result: T, route: R): CallOutcome<U>;
}

export interface StreamCallSpec<R, A extends string, Plan, S, E, U> extends CallSpec<A, Plan> {
  /** Text size of the prompt, for the journal's estimate if the stream is never finished here. */
  promptChars: number;
  /**
   * Lines that measure their usage as they stream (seconds of audio, images) rather than leave it to a text
   * estimate: what the call bills if its instance dies before any item (a transcription: the audio it sent).
   * Their `progress` then gives the usage so far, and a stream never finished here is billed that.
   */
  openingUsage?: U;
  open(route: R, requestId: string): Promise<S>;
  items(stream: S): AsyncIterable<E>;
  /** Generated characters in one item, the provider's ids as known so far, and the measured usage so far (journal checkpoints). */
  progress(item: E, stream: S): { chars: number; providerResponseId: string; servedModel: string; usage?: U };
  /** Read once the stream ended (normally, failed, or abandoned). */
  usageOf(stream: S, route: R): CallOutcome<U>;
}

export interface BilledStream<S, E, R = RouteRef> {
  requestId: string;
  stream: S;
  /** The route that opened the stream. */
  route: R;
  items: AsyncIterable<E>;
  /** Bills what the stream produced (`failed`: it broke after its first byte). Call after iteration ended; later calls do nothing. */
  finish(outcome: StreamOutcome): void;
}

export interface StreamOutcome {
  cancelled: boolean;
  failed?: boolean;
}

export class BilledCalls<R extends RouteRef, A extends string, U, Plan> {
  constructor(private readonly ports: BilledCallPorts<R, A, U, Plan>) {}

  async call<T>(spec: UnaryCallSpec<R, A, Plan, T, U>): Promise<{ requestId: string; result: T; route: R }> {
    const { requestId, hold, log, startedAt } = await this.authorize(spec, false);
    let tried: R | null = null;
    const { result, route } = await this.releasedOnFailure(spec, hold, { requestId, startedAt, streamed: false, tried: () => tried },
      () => this.ports.router.attempt(spec.plan, (r) => { tried = r; return spec.send(r, requestId); }, log));
    await this.settle(spec, requestId, hold, route, spec.usageOf(result, route), { streamed: false, cancelled: false, failed: false, startedAt, firstByteAt: startedAt }, log);
    return { requestId, result, route };
  }

  async stream<S, E>(spec: StreamCallSpec<R, A, Plan, S, E, U>): Promise<BilledStream<S, E, R>> {
    const { requestId, hold, log, startedAt } = await this.authorize(spec, true);
    let tried: R | null = null;
    const journal = this.ports.usage.openStream({
      requestId, traceId: spec.traceId, hold, accountId: spec.identity.accountId, keyHash: spec.identity.keyHash, model: spec.model, apiType: spec.apiType,
      startedAt, promptChars: spec.promptChars, ...(spec.openingUsage !== undefined ? { usage: spec.openingUsage } : {}),
    });
    const { result: stream, route } = await this.releasedOnFailure(spec, hold, { requestId, startedAt, streamed: true, tried: () => tried }, () => this.ports.router.attempt(spec.plan, async (r) => {
      tried = r;
      // The entry is written while the provider is asked, and is durable before the stream (any byte of it) is
      // handed on: the commit's wait overlaps the provider's, instead of adding to the time to first token.
      const journaled = journal.sendingTo(r.providerName, r.deployment.id);
      try {
        return await spec.open(r, requestId);
      } finally {
        await journaled;
      }
    }, log)).catch((err: unknown) => { journal.discard(); throw err; });
    const firstByteAt = Date.now();
    let finished = false;
    return {
      requestId,
      stream,
      route,
      items: journaled(spec.items(stream), (item) => {
        const { chars, ...progress } = spec.progress(item, stream);
        journal.noteOutput(chars, progress);
      }),
      finish: ({ cancelled, failed = false }) => {
        if (finished) return;
        finished = true;
        // The journal entry stays until the event is durable (its close waits for that): a stream need not wait here.
        void this.settle(spec, requestId, hold, route, spec.usageOf(stream, route), { streamed: true, cancelled, failed, startedAt, firstByteAt }, log);
        journal.close();
      },
    };
  }

  private async authorize(spec: CallSpec<A, Plan>, streamed: boolean): Promise<{ requestId: string; hold: CallHold; log: Logger; startedAt: number }> {
    const requestId = spec.requestId ?? newRequestId();
    const startedAt = Date.now();
    // Settled by billing from the usage event; released below if the call fails.
    let hold: CallHold;
    try {
      hold = await this.ports.holds.reserve(spec.identity, requestId, spec.plan, spec.traceId, spec.requestId !== undefined);
    } catch (err) {
      this.reportFailure(spec, { requestId, startedAt, streamed, tried: () => null }, err);
      throw err;
    }
    return { requestId, hold, log: lazyChild(this.ports.logger, { traceId: spec.traceId, requestId }), startedAt };
  }

  /** Nothing generated, nothing billed: the hold goes back, and the failure is reported. */
  private async releasedOnFailure<T>(spec: CallSpec<A, Plan>, hold: CallHold, attempt: FailureContext<R>, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      this.ports.holds.release(spec.identity, hold, spec.traceId);
      this.reportFailure(spec, attempt, err);
      throw err;
    }
  }

  private reportFailure(spec: CallSpec<A, Plan>, attempt: FailureContext<R>, err: unknown): void {
    const e = toGatewayError(err);
    this.ports.usage.failed({
      requestId: attempt.requestId, identity: spec.identity, model: spec.model, apiType: spec.apiType, route: attempt.tried(),
      errorKind: e.code, status: e.status, clientError: isClientError(e.status), streamed: attempt.streamed, startedAt: attempt.startedAt, traceId: spec.traceId,
    });
  }

  /** Records the usage (a refusal to take it throws, as before the answer); resolves once the event is durable. */
  private settle(spec: CallSpec<A, Plan>, requestId: string, hold: CallHold, route: R, outcome: CallOutcome<U>,
    timing: { streamed: boolean; cancelled: boolean; failed: boolean; startedAt: number; firstByteAt: number }, log: Logger): Promise<void> {
    if (!outcome.usage) log.error({ deployment: route.deployment.id, apiType: spec.apiType }, 'call ended without usage; recording zero usage');
    const durable = this.ports.usage.record({ requestId, traceId: spec.traceId, identity: spec.identity, hold, model: spec.model, apiType: spec.apiType, route, ...outcome, ...timing });
    // Taken but not yet durable: the caller still gets the answer; the publisher keeps the event and retries it.
    return Promise.resolve(durable).catch((err: unknown) => { log.warn({ err }, 'usage event not yet durable'); });
  }
}

interface FailureContext<R> {
  requestId: string;
  startedAt: number;
  streamed: boolean;
  /** The route tried last, if any. */
  tried: () => R | null;
}

/**
 * The caller's own failure: a refusal it can fix (a 4xx, or a feature the gateway does not offer), apart from
 * the provider's and the gateway's failures. A timeout (408) and a rate limit (429) are not the caller's.
 */
export function isClientError(status: number): boolean {
  return (status >= 400 && status < 500 && status !== 408 && status !== 429) || status === 501;
}

/** Passes every item through unchanged, journaling it first (ending early ends the source too). */
async function* journaled<T>(items: AsyncIterable<T>, note: (item: T) => void): AsyncGenerator<T> {
  for await (const item of items) {
    note(item);
    yield item;
  }
}

/**
 * How long a unary answer waits for its usage event to reach the outbox. Past it (the bus and the store both
 * failing) the answer goes out and the event stays buffered for the publisher's retries.
 */
export const USAGE_DURABLE_WAIT_MS = 2_000;

/**
 * Resolves when everything a batching publisher holds so far is in its outbox (flushes coalesce: one publish
 * carries every event waiting), or after `waitMs`; never rejects (a refused flush leaves the events buffered).
 */
export function untilFlushed(publisher: { flush(): Promise<void> }, waitMs = USAGE_DURABLE_WAIT_MS): Promise<void> {
  return bounded(publisher.flush(), waitMs);
}

/** As `untilFlushed`, but the events go with the publisher's next batch (its linger), not in a flush of their own. */
export function untilSent(publisher: { whenSent(): Promise<void> }, waitMs = USAGE_DURABLE_WAIT_MS): Promise<void> {
  return bounded(publisher.whenSent(), waitMs);
}

function bounded(sent: Promise<void>, waitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); });
  return Promise.race([sent.catch(() => undefined), bound]).finally(() => clearTimeout(timer));
}
