import type { ServerResponse } from 'node:http';
import { errorEnvelope, type GatewayError } from './errors';

/**
 * Server-sent events, written one way for every streaming route (inference) and every cut stream (edge).
 * Hand-written rather than a library (better-sse and the like own the response: they serialize their own
 * data, add `id:`/`retry:` fields and cannot append one event to a response another process started, which is
 * what the edge does when a service dies mid-stream); what is needed here is only framing and three headers.
 */

/** The streaming formats the gateway serves, each with its own in-stream error event. */
export type EventStreamFormat = 'chat' | 'responses' | 'messages';

export interface ServerSentEvent {
  event?: string;
  data: string;
}

/** One event: an `event:` line when named, and one `data:` line per line of the payload. */
export function encodeEvent(e: ServerSentEvent): string {
  const data = e.data.split(/\r\n|\r|\n/).join('\ndata: ');
  return `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${data}\n\n`;
}

/** Error types in the messages API's own vocabulary (by status), so its clients recognise a gateway error. */
const MESSAGES_ERROR_TYPE: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error',
  404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 529: 'overloaded_error',
};

/**
 * A failure after the first byte, as the format's own error event (API-NOTES, Streaming): chat, a `data:` line
 * holding the error envelope (and no `[DONE]`); responses, `event: error` numbered after the events sent;
 * messages, `event: error` with `{type: 'error', error: {type, message}}`.
 */
export function streamErrorEvent(format: EventStreamFormat, err: GatewayError, traceId: string, eventsSent?: number): string {
  switch (format) {
    case 'chat':
      return encodeEvent({ data: JSON.stringify(errorEnvelope(err, traceId)) });
    case 'responses':
      return encodeEvent({
        event: 'error',
        data: JSON.stringify({ type: 'error', code: err.type, message: err.message, param: err.param, ...(eventsSent === undefined ? {} : { sequence_number: eventsSent }) }),
      });
    case 'messages':
      return encodeEvent({ event: 'error', data: JSON.stringify({ type: 'error', error: { type: MESSAGES_ERROR_TYPE[err.status] ?? 'api_error', message: err.message } }) });
  }
}

/**
 * Bytes a stream may have written that its client has not taken yet (Node's buffer, past the kernel's) before a
 * relay waits for it: a slow reader then slows the provider's stream instead of growing this process's memory.
 */
const MAX_CLIENT_BACKLOG_BYTES = 1024 * 1024;

export interface EventStreamOptions {
  format: EventStreamFormat;
  /** A `: ping` comment after this long without an event keeps idle proxies from closing the stream; 0: none. */
  heartbeatMs: number;
  /** Extra response headers (the call's `x-request-id`). */
  headers?: Record<string, string>;
}

/**
 * One streamed response. `open` sends the headers in this turn of the event loop (no proxy buffering): with the
 * first event when it is written in the same turn, on their own at the end of it otherwise; `clientGone` turns
 * true when the client closed the connection first, and from then on writes are dropped, so the caller can keep
 * draining its source to learn (and bill) what was generated.
 */
export class EventStreamWriter {
  private gone = false;
  private sent = 0;
  private heartbeat: NodeJS.Timeout | null = null;
  private headersDue: NodeJS.Immediate | null = null;

  constructor(private readonly res: ServerResponse, private readonly opts: EventStreamOptions) {}

  get clientGone(): boolean {
    return this.gone;
  }

  /** Events written so far. */
  get eventsSent(): number {
    return this.sent;
  }

  open(): void {
    const res = this.res;
    res.statusCode = 200;
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('x-accel-buffering', 'no');
    for (const [name, value] of Object.entries(this.opts.headers ?? {})) res.setHeader(name, value);
    res.on('close', () => {
      if (!res.writableFinished) this.gone = true;
      this.stopHeartbeat();
    });
    // A relayed stream opens once its provider's first bytes are in, so its first event usually follows in this
    // turn: headers and event then leave in one socket write instead of two (a write costs tens of µs here).
    this.headersDue = setImmediate(() => {
      this.headersDue = null;
      if (!this.gone && !res.headersSent) res.flushHeaders();
    });
    if (this.opts.heartbeatMs > 0) {
      this.heartbeat = setInterval(() => { if (!this.gone) res.write(': ping\n\n'); }, this.opts.heartbeatMs);
      this.heartbeat.unref();
    }
  }

  event(e: ServerSentEvent): void {
    if (this.gone) return;
    this.res.write(encodeEvent(e));
    this.sent += 1;
    this.heartbeat?.refresh();
  }

  /**
   * Null while the client keeps up (or has left); otherwise resolves once it has taken what was written (or left).
   * A relay awaits it between events, so at most `MAX_CLIENT_BACKLOG_BYTES` and one event wait in memory.
   */
  backlogTaken(): Promise<void> | null {
    const res = this.res;
    if (this.gone || res.writableLength <= MAX_CLIENT_BACKLOG_BYTES) return null;
    return new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  /** Ends the stream, after `trailer` (chat's `data: [DONE]`) when given. */
  end(trailer?: ServerSentEvent): void {
    this.stopHeartbeat();
    if (this.gone) return;
    this.res.end(trailer ? encodeEvent(trailer) : undefined);
  }

  /** Ends the stream with the format's error event. */
  fail(err: GatewayError, traceId: string): void {
    this.stopHeartbeat();
    if (this.gone) return;
    this.res.end(streamErrorEvent(this.opts.format, err, traceId, this.sent));
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.headersDue) clearImmediate(this.headersDue);
    this.headersDue = null;
  }
}
