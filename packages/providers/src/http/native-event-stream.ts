import type { NativeEvent, NativeResponse, NativeStream, ServerSentEvent, Usage } from '@gw/provider-spec';
import type { UpstreamAnswer } from './arrived-bytes-request';
import type { Deadline } from './deadline';
import { translateEventStream } from './translate-event-stream';

/** Watches a native passthrough stream: reads id, model and usage from the events while passing them on. */
export interface NativeStreamObserver {
  /** The events to pass on for one upstream event; throws to end the stream with an error. */
  observe(event: ServerSentEvent): NativeEvent[];
  /** The provider's terminal event went by: the stream ends there, without waiting for the body's end. */
  complete(): boolean;
  /** Called when the stream is over: throws when it stopped before the answer was finished. */
  end(): void;
  usage(): Usage | null;
  responseId(): string;
  servedModel(): string;
}

/** A 2xx native stream answer, passed through `observer`. */
export function nativeEventStream(res: UpstreamAnswer, deadline: Deadline, observer: NativeStreamObserver): NativeStream {
  return {
    events: translateEventStream(res, deadline, (event) => observer.observe(event), () => observer.end(), () => observer.complete()),
    usage: () => observer.usage(),
    providerResponseId: () => observer.responseId(),
    servedModel: () => observer.servedModel(),
  };
}

/** An upstream event as the client gets it: its name (when it had one) and its raw data. */
export function forwardedEvent(event: ServerSentEvent): NativeEvent {
  return event.event === undefined ? { data: event.data } : { event: event.event, data: event.data };
}

/** A native call's 2xx answer: the provider's JSON as it sent it, with the id, model and usage read from it. */
export function nativeResponse(res: UpstreamAnswer, body: unknown, read: { id: string; model: string }, usage: Usage): NativeResponse {
  return { status: res.statusCode, body, usage, providerResponseId: read.id, servedModel: read.model };
}
