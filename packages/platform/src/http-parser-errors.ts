import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorEnvelope, GatewayError, InputError, PayloadTooLargeError } from './errors';
import { newTraceId } from './ids';

/**
 * Requests Node's own HTTP parser refuses never reach express; by default Node answers them with an empty
 * body. Answer them in the spec's envelope instead, closing the connection as Node does (after a parse error
 * the rest of the byte stream cannot be trusted).
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset connection has no one to answer; while a response is being written, any other bytes would
    // corrupt it (the condition Node itself applies before its bare answer).
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const traceId = newTraceId();
    const e = parserError(err as ParserFailure);
    const body = JSON.stringify(errorEnvelope(e, traceId));
    socket.end(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\ncontent-type: application/json; charset=utf-8\r\n`
      + `content-length: ${Buffer.byteLength(body)}\r\nx-trace-id: ${traceId}\r\nconnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  });
  // Registering this listener replaces Node's bare 417 for an `Expect` other than `100-continue`.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const traceId = newTraceId();
    const e = new GatewayError('Only "Expect: 100-continue" is supported', 417, 'invalid_request_error', 'expectation_failed', 'expect');
    const body = JSON.stringify(errorEnvelope(e, traceId));
    // The body the client holds back is never read: close rather than leave it on the connection.
    res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-trace-id': traceId, connection: 'close' });
    res.end(body);
    req.resume();
  });
}

/** What Node's parser reports of a failure: the packet it was parsing and how far into it it got. */
type ParserFailure = NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number };

/**
 * Whether a head that overflowed did so in its first line (Node counts the request line with the headers): the
 * packet it was parsing starts a request, and the parser stopped before that packet's first line ended.
 */
function requestLineOverflowed({ rawPacket: packet, bytesParsed }: ParserFailure): boolean {
  if (packet === undefined || bytesParsed === undefined || !/^[A-Z]+ /.test(packet.subarray(0, 16).toString('latin1'))) return false;
  const lineEnd = packet.indexOf(0x0a);
  return lineEnd === -1 || lineEnd >= bytesParsed;
}

/** The statuses Node itself picks for each parser failure (414 where it would say 431 of a URL), as typed errors. */
function parserError(err: ParserFailure): GatewayError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      if (requestLineOverflowed(err)) return new GatewayError('The request URL is too long', 414, 'invalid_request_error', 'uri_too_long');
      return new GatewayError('Request headers are too large', 431, 'invalid_request_error', 'headers_too_large');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new PayloadTooLargeError('Chunk extensions are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('The request was not received in time', 408, 'invalid_request_error', 'request_timeout');
    default:
      return new InputError('Malformed HTTP request', null, 'malformed_http_request');
  }
}
