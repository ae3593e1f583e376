import type { ErrorRequestHandler, Response } from 'express';
import { GatewayError, InputError, PayloadTooLargeError, toGatewayError, type Logger } from '@gw/platform';

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
    const e = fromRequestError(err);
    if (e.status >= 500) logger.error({ err, traceId: req.traceId, path: req.baseUrl + req.path }, 'key request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendKeysError(res, e);
  };
}

function fromRequestError(err: unknown): GatewayError {
  // Typed errors carry `type` and `status` too, so they must be recognised before the body-parser checks.
  if (err instanceof GatewayError) return err;
  const bp = err as { type?: string; status?: number };
  if (bp?.type === 'entity.too.large') return new PayloadTooLargeError();
  if (bp?.type === 'entity.parse.failed') return new InputError('Request body is not valid JSON', 'body', 'invalid_json');
  if (bp?.type && bp.status === 400) return new InputError('Malformed request body', 'body');
  return toGatewayError(err);
}
