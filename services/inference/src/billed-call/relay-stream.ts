import type { StreamOutcome } from '@gw/billed-call';
import { toGatewayError, type EventStreamWriter, type Logger, type ServerSentEvent } from '@gw/platform';

export interface StreamRouteOptions {
  /** How long a stream whose client left is still read, so what the provider generated is known and billed. */
  drainMs: number;
  /** `: ping` comments on an idle stream; 0: none. */
  heartbeatMs: number;
}

/**
 * Relays a billed stream to its client through the event-stream writer: each item written (until the client
 * leaves, then drained for at most `drainMs`), the next read only once the client has taken all but a bounded
 * backlog, the trailer or the format's error event at the end, and the call finished (billed) exactly once
 * however it ended.
 */
export async function relayStream<E>(items: AsyncIterable<E>, writer: EventStreamWriter, o: {
  write(item: E): void;
  trailer?: ServerSentEvent;
  finish(outcome: StreamOutcome): void;
  drainMs: number;
  traceId: string;
  log: Logger;
}): Promise<void> {
  writer.open();
  let drainDeadline = 0;
  let failed = false;
  try {
    for await (const item of items) {
      if (writer.clientGone) {
        drainDeadline ||= Date.now() + o.drainMs;
        if (Date.now() > drainDeadline) break;
        continue;
      }
      o.write(item);
      // A client slower than the provider: its stream waits (the provider's with it) instead of piling up here.
      const backlog = writer.backlogTaken();
      if (backlog) await backlog;
    }
    writer.end(o.trailer);
  } catch (err) {
    failed = true;
    const e = toGatewayError(err);
    o.log.warn({ err: e.message }, 'stream failed after the first byte');
    writer.fail(e, o.traceId);
  } finally {
    o.finish({ cancelled: writer.clientGone, failed });
  }
}
