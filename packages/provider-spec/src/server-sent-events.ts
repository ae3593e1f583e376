import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** One dispatched event of a `text/event-stream` body. */
export interface ServerSentEvent {
  /** The `event:` field; undefined means the default type ("message"). */
  event?: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The `id:` field of this event, when it set one. */
  id?: string;
}

/**
 * Reads a `text/event-stream` body by the WHATWG rules (eventsource-parser): byte chunks may split lines, line
 * endings (CRLF, LF, CR) or UTF-8 sequences anywhere; an unterminated event at the end of the body is discarded.
 * `retry:` fields are dropped: the gateway never reconnects to a provider's stream.
 */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  // The default decoder strips a leading BOM and keeps split multi-byte sequences across calls.
  const decoder = new TextDecoder('utf-8');
  let completed: ServerSentEvent[] = [];
  const parser = createParser({ onEvent: (message) => { completed.push(eventOf(message)); } });
  let lastChar = '';
  const feed = (text: string) => {
    if (text === '') return [];
    parser.feed(text);
    lastChar = text[text.length - 1]!;
    const events = completed;
    completed = [];
    return events;
  };
  for await (const bytes of body) {
    for (const event of feed(decoder.decode(bytes, { stream: true }))) yield event;
  }
  for (const event of feed(decoder.decode())) yield event;
  // The parser holds a final CR back in case an LF follows; at the end of the body it is a line ending.
  if (lastChar === '\r') for (const event of feed('\n')) yield event;
}

function eventOf(message: EventSourceMessage): ServerSentEvent {
  const event: ServerSentEvent = { data: message.data };
  if (message.event !== undefined) event.event = message.event;
  if (message.id !== undefined) event.id = message.id;
  return event;
}
