import type { IncomingMessage, ServerResponse } from 'node:http';
import { H_TRACE_ID, sendError, streamErrorEvent, UnavailableError, type Logger } from '@gw/platform';
import { streamFormatOf } from './route-table';

const CUT_MESSAGE = 'The service streaming this response stopped before the response was complete';

const KEPT_ON_CUT = new Set(['x-request-id', 'x-trace-id']);

function isEventStream(contentType: string | undefined): boolean {
  return typeof contentType === 'string' && contentType.toLowerCase().startsWith('text/event-stream');
}

function pathOf(req: IncomingMessage): string {
  const url = (req as { originalUrl?: string }).originalUrl ?? req.url ?? '/';
  return url.split('?', 1)[0];
}

/**
 * Watches one proxied response. When the service's response stops before it completed (the process died, the
 * socket closed, or the idle timeout aborted it), the proxy's pipe would leave the client waiting forever.
 * Instead: nothing sent yet → a 503 in the envelope; an event stream under way → the route's error event, then
 * the end; any other body under way → the connection is closed, so the client sees the cut at once.
 */
export function endCutResponses(proxyRes: IncomingMessage, req: IncomingMessage, res: ServerResponse, logger: Logger): void {
  const format = isEventStream(proxyRes.headers['content-type']) ? streamFormatOf(pathOf(req)) : null;
  // The last two bytes passed on: an error event must not be glued to a half-sent event.
  let tail = '\n\n';
  if (format) proxyRes.on('data', (chunk: Buffer) => { tail = (tail + chunk.subarray(-2).toString('latin1')).slice(-2); });
  proxyRes.once('close', () => {
    if (proxyRes.complete || res.writableEnded || res.destroyed) return;
    proxyRes.unpipe(res);
    const traceId = String(req.headers[H_TRACE_ID] ?? '');
    logger.warn({ path: pathOf(req), traceId, headersSent: res.headersSent }, 'service response cut before it completed');
    if (!res.headersSent) {
      // The service's headers described a body that will not come; its request id still names the call.
      for (const name of res.getHeaderNames()) if (!KEPT_ON_CUT.has(name)) res.removeHeader(name);
      sendError(res as never, new UnavailableError('The service for this route is unavailable'), traceId);
    } else if (format) {
      const separator = tail === '\n\n' ? '' : tail.endsWith('\n') ? '\n' : '\n\n';
      res.end(separator + streamErrorEvent(format, new UnavailableError(CUT_MESSAGE, 'upstream_stream_cut'), traceId));
    } else {
      res.destroy();
    }
  });
}
