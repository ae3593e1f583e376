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
 * The most bytes one event may take, with the comments and blank lines before it: a partial image of the largest
 * size fits many times over, and a body that never ends its event cannot grow without bound.
 */
export const MAX_EVENT_BYTES = 32 * 1024 * 1024;

const LINE_END = /[\r\n]/;

/** A stream whose next event did not end within `limitBytes`: it was cut there. */
export class ServerSentEventTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`An event of the stream went past ${limitBytes} bytes`);
    this.name = 'ServerSentEventTooLargeError';
  }
}

/**
 * Reads a `text/event-stream` body by the WHATWG rules (eventsource-parser): byte chunks may split lines, line
 * endings (CRLF, LF, CR) or UTF-8 sequences anywhere; an unterminated event at the end of the body is discarded.
 * `retry:` fields are dropped: the gateway never reconnects to a provider's stream. Throws
 * `ServerSentEventTooLargeError` once `maxEventBytes` arrived without an event ending.
 */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>, maxEventBytes = MAX_EVENT_BYTES): AsyncGenerator<ServerSentEvent> {
  // The default decoder strips a leading BOM and keeps split multi-byte sequences across calls.
  const decoder = new TextDecoder('utf-8');
  let completed: ServerSentEvent[] = [];
  const parser = createParser({ onEvent: (message) => { completed.push(eventOf(message)); } });
  let lastChar = '';
  // eventsource-parser scans its whole unfinished line again on every feed: a long line fed in many chunks costs
  // time quadratic in its length (a 16 MiB event in 64 KiB chunks blocked the event loop 1.8 s). Text without a
  // line end waits here and goes in with the text that ends its line.
  let held: string[] = [];
  const feed = (text: string) => {
    if (text === '') return [];
    lastChar = text[text.length - 1]!;
    if (!LINE_END.test(text)) {
      held.push(text);
      return [];
    }
    parser.feed(held.length === 0 ? text : held.join('') + text);
    held = [];
    const events = completed;
    completed = [];
    return events;
  };
  // Bytes since the last event ended (counted per chunk, so the bound holds within one chunk's size).
  let pendingBytes = 0;
  for await (const bytes of body) {
    pendingBytes += bytes.length;
    const events = feed(decoder.decode(bytes, { stream: true }));
    if (events.length > 0) pendingBytes = 0;
    else if (pendingBytes > maxEventBytes) throw new ServerSentEventTooLargeError(maxEventBytes);
    for (const event of events) yield event;
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
