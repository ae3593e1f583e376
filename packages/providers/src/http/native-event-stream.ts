import type { Dispatcher } from 'undici';
import { readServerSentEvents, type NativeEvent, type ServerSentEvent } from '@gw/provider-spec';
import type { Deadline } from './deadline';
import { releasingIterable } from './releasing-iterable';
import { mapTransportError } from './upstream-errors';

/** Reads what a native stream carries (usage, ids) without changing it. */
export interface NativeStreamObserver {
  /** Sees each event before it is passed on; may throw to end the stream with an error. */
  observe(event: ServerSentEvent): void;
  /** Called when the body ended: throws when the stream stopped before the answer was finished. */
  end(): void;
}

/**
 * A provider's server-sent events passed through as they arrive (event name and raw data). Transport
 * failures become typed errors; the upstream connection is released however iteration stops.
 */
export function passThroughEvents(body: Dispatcher.ResponseData['body'], deadline: Deadline, observer: NativeStreamObserver): AsyncIterable<NativeEvent> {
  // From here on the per-request bodyTimeout bounds each gap between events; a long answer is fine.
  deadline.stopTimer();
  const release = () => {
    if (!body.destroyed) {
      // undici reports a destroy before the end as an 'error' event; nobody is left to hear it.
      body.on('error', () => {});
      body.destroy();
    }
    deadline.dispose();
  };
  async function* events(): AsyncGenerator<NativeEvent> {
    try {
      for await (const event of readServerSentEvents(body)) {
        observer.observe(event);
        yield event.event === undefined ? { data: event.data } : { event: event.event, data: event.data };
      }
      observer.end();
    } catch (err) {
      throw mapTransportError(err, deadline);
    } finally {
      release();
    }
  }
  return releasingIterable(events(), release);
}
