import type { ErrorRequestHandler, Response } from 'express';
import { fromExpressError, logRequestError, type GatewayError, type Logger } from '@gw/platform';

/**
 * The key endpoints answer plain JSON (OpenRouter shape), not the spec's envelope:
 * `{"error": {"code": <http status>, "message": "...", "param": <name or null>}}`.
 */
export function sendKeysError(res: Response, err: GatewayError): void {
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  res.status(err.status).json({ error: { code: err.status, message: err.message, param: err.param } });
}

/** Error handler for the key routes only; mounted on their paths so body-parser failures land here too. */
export function keysErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const e = fromExpressError(err, req);
    logRequestError(req.log ?? logger.child({ traceId: req.traceId }), err, e, req.baseUrl + req.path);
    if (res.headersSent) {
      res.end();
      return;
    }
    sendKeysError(res, e);
  };
}
