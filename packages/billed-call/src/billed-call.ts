import { newRequestId, type Identity, type Logger } from '@gw/platform';

/**
 * The billed call: one lifecycle for every line that calls a provider for an account (chat, responses,
 * messages; images, audio, video and batch plug in the same way):
 *
 *   prepare (the line's own validation) → authorize (a spend hold) → request id → route with fallback
 *   → usage → settle (the usage event, which settles the hold in billing) → finish, exactly once.
 *
 * A failure before the provider answered releases the hold and bills nothing; a stream is journaled before
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
  startedAt: number;
  firstByteAt: number;
  /** The trace id of the request that made the call, carried into its billing record. */
  traceId: string;
}

export interface JournalStart<A extends string> {
  requestId: string;
  traceId: string;
  hold: CallHold;
  accountId: string;
  keyHash: string;
  model: string;
  apiType: A;
  startedAt: number;
  promptChars: number;
}

/** A stream's durable record while it runs (the open-call journal). */
export interface StreamJournal {
  /** Written before each provider attempt, naming where the request goes. */
  sendingTo(providerName: string, deploymentId: string): Promise<void>;
  noteOutput(chars: number, ids: { providerResponseId: string; servedModel: string }): void;
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
    openStream(start: JournalStart<A>): StreamJournal;
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
  open(route: R, requestId: string): Promise<S>;
  items(stream: S): AsyncIterable<E>;
  /** Generated characters in one item, and the provider's ids as known so far (journal checkpoints). */
  progress(item: E, stream: S): { chars: number; providerResponseId: string; servedModel: string };
  /** Read once the stream ended (normally, failed, or abandoned). */
  usageOf(stream: S, route: R): CallOutcome<U>;
}

export interface BilledStream<S, E, R = RouteRef> {
  requestId: string;
  stream: S;
  /** The route that opened the stream. */
  route: R;
  items: AsyncIterable<E>;
  /** Bills what the stream produced. Call after iteration ended; later calls do nothing. */
  finish(outcome: { cancelled: boolean }): void;
}

export class BilledCalls<R extends RouteRef, A extends string, U, Plan> {
  constructor(private readonly ports: BilledCallPorts<R, A, U, Plan>) {}

  async call<T>(spec: UnaryCallSpec<R, A, Plan, T, U>): Promise<{ requestId: string; result: T; route: R }> {
    const { requestId, hold, log, startedAt } = await this.authorize(spec);
    const { result, route } = await this.releasedOnFailure(spec, hold,
      () => this.ports.router.attempt(spec.plan, (r) => spec.send(r, requestId), log));
    await this.settle(spec, requestId, hold, route, spec.usageOf(result, route), { streamed: false, cancelled: false, startedAt, firstByteAt: startedAt }, log);
    return { requestId, result, route };
  }

  async stream<S, E>(spec: StreamCallSpec<R, A, Plan, S, E, U>): Promise<BilledStream<S, E, R>> {
    const { requestId, hold, log, startedAt } = await this.authorize(spec);
    const journal = this.ports.usage.openStream({
      requestId, traceId: spec.traceId, hold, accountId: spec.identity.accountId, keyHash: spec.identity.keyHash, model: spec.model, apiType: spec.apiType,
      startedAt, promptChars: spec.promptChars,
    });
    const { result: stream, route } = await this.releasedOnFailure(spec, hold, () => this.ports.router.attempt(spec.plan, async (r) => {
      await journal.sendingTo(r.providerName, r.deployment.id);
      return spec.open(r, requestId);
    }, log)).catch((err: unknown) => { journal.discard(); throw err; });
    const firstByteAt = Date.now();
    let finished = false;
    return {
      requestId,
      stream,
      route,
      items: journaled(spec.items(stream), (item) => {
        const { chars, ...ids } = spec.progress(item, stream);
        journal.noteOutput(chars, ids);
      }),
      finish: ({ cancelled }) => {
        if (finished) return;
        finished = true;
        // The journal entry stays until the event is durable (its close waits for that): a stream need not wait here.
        void this.settle(spec, requestId, hold, route, spec.usageOf(stream, route), { streamed: true, cancelled, startedAt, firstByteAt }, log);
        journal.close();
      },
    };
  }

  private async authorize(spec: CallSpec<A, Plan>): Promise<{ requestId: string; hold: CallHold; log: Logger; startedAt: number }> {
    const requestId = spec.requestId ?? newRequestId();
    // Settled by billing from the usage event; released below if the call fails.
    const hold = await this.ports.holds.reserve(spec.identity, requestId, spec.plan, spec.traceId, spec.requestId !== undefined);
    return { requestId, hold, log: this.ports.logger.child({ traceId: spec.traceId, requestId }), startedAt: Date.now() };
  }

  /** Nothing generated, nothing billed: the hold goes back. */
  private async releasedOnFailure<T>(spec: CallSpec<A, Plan>, hold: CallHold, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      this.ports.holds.release(spec.identity, hold, spec.traceId);
      throw err;
    }
  }

  /** Records the usage (a refusal to take it throws, as before the answer); resolves once the event is durable. */
  private settle(spec: CallSpec<A, Plan>, requestId: string, hold: CallHold, route: R, outcome: CallOutcome<U>,
    timing: { streamed: boolean; cancelled: boolean; startedAt: number; firstByteAt: number }, log: Logger): Promise<void> {
    if (!outcome.usage) log.error({ deployment: route.deployment.id, apiType: spec.apiType }, 'call ended without usage; recording zero usage');
    const durable = this.ports.usage.record({ requestId, traceId: spec.traceId, identity: spec.identity, hold, model: spec.model, apiType: spec.apiType, route, ...outcome, ...timing });
    // Taken but not yet durable: the caller still gets the answer; the publisher keeps the event and retries it.
    return Promise.resolve(durable).catch((err: unknown) => { log.warn({ err }, 'usage event not yet durable'); });
  }
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
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); });
  return Promise.race([publisher.flush().catch(() => undefined), bound]).finally(() => clearTimeout(timer));
}
