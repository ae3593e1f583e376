import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { H_TRACE_ID, IDENTITY_HEADER, injectTraceContext, INTERNAL_HEADER_PREFIX, PayloadTooLargeError, sendError, UnavailableError, type Logger } from '@gw/platform';
import { endCutResponses } from './cut-responses';

/**
 * Removes every header a client must not be able to set (anything internal) and the caller's secret, and
 * attaches the trace id, and the signed identity token (bound to this request) when the request crosses a
 * network hop. Services believe only the token, or an identity handed over in-process.
 * The client's W3C trace context is replaced by the edge's span (when tracing is on), so the service's span is
 * the edge's child.
 */
export function rewriteHeaders(req: IncomingMessage, identityToken: string | null, traceId: string): void {
  for (const name of Object.keys(req.headers)) {
    if (name.startsWith(INTERNAL_HEADER_PREFIX)) delete req.headers[name];
  }
  delete req.headers.authorization;
  delete req.headers['x-api-key'];
  delete req.headers.traceparent;
  delete req.headers.tracestate;
  injectTraceContext(req.headers);
  req.headers[H_TRACE_ID] = traceId;
  if (identityToken !== null) req.headers[IDENTITY_HEADER] = identityToken;
}

/**
 * Counts the bytes that actually arrive (a missing or lying Content-Length included) while the body streams
 * through untouched. Attached when the proxy request exists, so the proxy's own pipe is already in place
 * and no byte is consumed before it.
 */
function countBodyBytes(req: IncomingMessage, proxyReq: ClientRequest, res: ServerResponse, limit: number): void {
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > limit && !res.headersSent) {
      proxyReq.destroy();
      // The connection is torn down below: say so, or a keep-alive client reuses the dead socket.
      res.setHeader('connection', 'close');
      sendError(res as never, new PayloadTooLargeError(`Request body exceeds ${limit} bytes`), String(req.headers[H_TRACE_ID] ?? ''));
      req.destroy();
    }
  });
}

/**
 * A streaming reverse proxy to one service over a keep-alive pool; bodies and SSE pass through as bytes.
 * `idleTimeoutMs`: a service silent that long (no byte either way) is cut off, so no client waits forever.
 */
export function forwardTo(target: string, bodyLimit: number, logger: Logger, idleTimeoutMs: number): RequestHandler {
  const agent = new Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 64 });
  return createProxyMiddleware({
    target,
    agent,
    changeOrigin: false,
    xfwd: false,
    proxyTimeout: idleTimeoutMs,
    on: {
      proxyReq: (proxyReq, req, res) => countBodyBytes(req, proxyReq, res as ServerResponse, bodyLimit),
      proxyRes: (proxyRes, req, res) => endCutResponses(proxyRes, req, res as ServerResponse, logger),
      error: (err, req, res) => {
        const traceId = String((req as IncomingMessage).headers[H_TRACE_ID] ?? '');
        logger.warn({ err: (err as Error).message, target, traceId }, 'forwarding failed');
        if ('status' in res && !(res as { headersSent?: boolean }).headersSent) {
          sendError(res as never, new UnavailableError('The service for this route is unavailable'), traceId);
        } else if ('destroy' in res) {
          (res as { destroy(): void }).destroy();
        }
      },
    },
  }) as unknown as RequestHandler;
}
