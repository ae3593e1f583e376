import type { Dispatcher } from 'undici';
import { readServerSentEvents, type ServerSentEvent } from '@gw/provider-spec';
import type { Deadline } from './deadline';
import { releasingIterable } from './releasing-iterable';
import { mapTransportError } from './upstream-errors';

/**
 * Feeds the events of a 2xx stream answer to `translate` and yields what it returns; `end` runs when the body
 * ended (it may throw, or yield closing items). Failures become typed errors; the connection is released
 * however iteration stops.
 */
export function translateEventStream<T>(
  res: Dispatcher.ResponseData,
  deadline: Deadline,
  translate: (event: ServerSentEvent) => Iterable<T>,
  end: () => Iterable<T> | void,
): AsyncIterable<T> {
  // From here on the per-request bodyTimeout bounds each gap between events; a long answer is fine.
  deadline.stopTimer();
  const body = res.body;
  const release = () => {
    if (!body.destroyed) {
      // undici reports a destroy before the end as an 'error' event; nobody is left to hear it.
      body.on('error', () => {});
      body.destroy();
    }
    deadline.dispose();
  };
  async function* run(): AsyncGenerator<T> {
    try {
      for await (const event of readServerSentEvents(body)) yield* translate(event);
      const closing = end();
      if (closing) yield* closing;
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      release();
    }
  }
  return releasingIterable(run(), release);
}
