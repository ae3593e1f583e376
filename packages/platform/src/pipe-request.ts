import type { IncomingMessage } from 'node:http';
import type { Writable } from 'node:stream';

/**
 * Pipes a request's body into `parser` (a form parser), and fails the parser when the client leaves before its
 * body ended: `pipe` passes no abort on, so the parser would wait for the rest forever, holding what it had. Not
 * `pipeline`: on the parser's own refusal the request must stay open, drained, so the answer reaches the client.
 */
export function pipeRequestInto(req: IncomingMessage, parser: Writable): void {
  req.once('close', () => {
    if (!req.complete) parser.destroy(new Error('The client left before its body ended'));
  });
  req.pipe(parser);
}
