/** One dispatched event of a `text/event-stream` body. */
export interface ServerSentEvent {
  /** The `event:` field; undefined means the default type ("message"). */
  event?: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The `id:` field of this event, when it set one. */
  id?: string;
  /** The `retry:` reconnection time in ms, when this event set one. */
  retry?: number;
}

const LF = 10;
const CR = 13;

/**
 * Incremental parser following the WHATWG event-stream rules: lines end in CRLF, LF or CR (a CR at the end of
 * one chunk may be followed by its LF in the next), `:` lines are comments, one leading space after the colon
 * is dropped, events are dispatched on a blank line, and an event with no data is not dispatched.
 */
export class ServerSentEventParser {
  private partialLine = '';
  private lastWasCR = false;
  private data = '';
  private hasData = false;
  private event: string | undefined;
  private id: string | undefined;
  private retry: number | undefined;

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): ServerSentEvent[] {
    const events: ServerSentEvent[] = [];
    let start = 0;
    if (this.lastWasCR && text.charCodeAt(0) === LF) start = 1;
    this.lastWasCR = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      const line = this.partialLine + text.slice(start, i);
      this.partialLine = '';
      if (c === CR) {
        if (i + 1 === text.length) this.lastWasCR = true;
        else if (text.charCodeAt(i + 1) === LF) i++;
      }
      start = i + 1;
      const event = this.processLine(line);
      if (event) events.push(event);
    }
    if (start < text.length) this.partialLine += text.slice(start);
    return events;
  }

  private processLine(line: string): ServerSentEvent | undefined {
    if (line.length === 0) return this.dispatch();
    const colon = line.indexOf(':');
    if (colon === 0) return undefined;
    let field = line;
    let value = '';
    if (colon > 0) {
      field = line.slice(0, colon);
      value = line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    switch (field) {
      case 'data':
        this.data = this.hasData ? `${this.data}\n${value}` : value;
        this.hasData = true;
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.id = value;
        break;
      case 'retry':
        if (isAsciiDigits(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
    return undefined;
  }

  private dispatch(): ServerSentEvent | undefined {
    const event: ServerSentEvent | undefined = this.hasData ? { data: this.data } : undefined;
    if (event) {
      if (this.event) event.event = this.event;
      if (this.id !== undefined) event.id = this.id;
      if (this.retry !== undefined) event.retry = this.retry;
    }
    this.data = '';
    this.hasData = false;
    this.event = undefined;
    this.id = undefined;
    this.retry = undefined;
    return event;
  }
}

function isAsciiDigits(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * Reads a `text/event-stream` body. Byte chunks may split lines or UTF-8 sequences anywhere. An unterminated
 * event at the end of the body is discarded, as the spec requires.
 */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  // The default decoder strips a leading BOM and keeps split multi-byte sequences across calls.
  const decoder = new TextDecoder('utf-8');
  const parser = new ServerSentEventParser();
  for await (const bytes of body) {
    for (const event of parser.push(decoder.decode(bytes, { stream: true }))) yield event;
  }
  for (const event of parser.push(decoder.decode())) yield event;
}
