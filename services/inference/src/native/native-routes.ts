import { Router, type Request, type Response } from 'express';
import { NotImplementedError, requireIdentity, toGatewayError } from '@gw/platform';
import type { NativeApi, NativeEvent } from '@gw/provider-spec';
import type { NativeService } from './native-service';

/**
 * `POST /v1/responses` and `POST /v1/messages` (JSON, or the provider's server-sent events passed through),
 * and the stored-response paths, which a stateless gateway cannot serve.
 */
export function nativeRoutes(native: NativeService, drainMs: number): Router {
  const router = Router();
  const serve = (api: NativeApi) => async (req: Request, res: Response) => {
    const identity = requireIdentity(req);
    const call = { api, body: req.body, headers: req.headers, identity, traceId: req.traceId };
    if ((req.body as { stream?: unknown })?.stream === true) {
      await streamNative(native.stream(call), req, res, drainMs);
      return;
    }
    const { requestId, response } = await native.call(call);
    res.setHeader('x-request-id', requestId);
    res.status(response.status).json(response.body);
  };
  router.post('/v1/responses', serve('responses'));
  router.post('/v1/messages', serve('messages'));

  const stored = (what: string) => (req: Request) => {
    requireIdentity(req);
    throw new NotImplementedError(`Unsupported: ${what} needs stored responses, and this gateway is stateless`, 'response_id');
  };
  router.get('/v1/responses/:response_id', stored('retrieving a response'));
  router.get('/v1/responses/:response_id/input_items', stored('listing input items'));
  router.post('/v1/responses/:response_id/cancel', stored('cancelling a response'));
  return router;
}

async function streamNative(starting: ReturnType<NativeService['stream']>, req: Request, res: Response, drainMs: number) {
  // Failures up to here (validation, balance, upstream before its first byte) are ordinary error responses.
  const started = await starting;
  const log = req.log.child({ requestId: started.requestId });
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('x-request-id', started.requestId);
  res.flushHeaders();

  let clientGone = false;
  res.on('close', () => { clientGone = !res.writableFinished; });
  let drainDeadline = 0;
  try {
    for await (const event of started.events) {
      if (clientGone) {
        // Keep reading (bounded) so what the provider generated is known and billed.
        drainDeadline ||= Date.now() + drainMs;
        if (Date.now() > drainDeadline) break;
        continue;
      }
      res.write(encodeEvent(event));
    }
    if (!clientGone) res.end();
  } catch (err) {
    const e = toGatewayError(err);
    log.warn({ err: e.message }, 'native stream failed after the first byte');
    if (!clientGone) res.end(encodeEvent(started.errorEvent({ type: e.type, message: e.message })));
  } finally {
    started.finish({ cancelled: clientGone });
  }
}

/** One server-sent event; a multi-line payload needs one `data:` line per line. */
function encodeEvent(event: NativeEvent): string {
  const data = event.data.includes('\n') ? event.data.split('\n').join('\ndata: ') : event.data;
  return `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${data}\n\n`;
}
