import { Router, type Request, type Response } from 'express';
import { EventStreamWriter, lazyChild, NotImplementedError, requireIdentity } from '@gw/platform';
import type { NativeApi } from '@gw/provider-spec';
import { relayStream, type StreamRouteOptions } from '../billed-call/relay-stream';
import type { NativeService } from './native-service';

/**
 * `POST /v1/responses` and `POST /v1/messages` (JSON, or the provider's server-sent events passed through),
 * `POST /v1/messages/count_tokens`, and the stored-response paths, which a stateless gateway cannot serve.
 */
export function nativeRoutes(native: NativeService, opts: StreamRouteOptions): Router {
  const router = Router();
  const serve = (api: NativeApi) => async (req: Request, res: Response) => {
    const identity = requireIdentity(req);
    const call = { api, body: req.body, headers: req.headers, identity, traceId: req.traceId };
    if ((req.body as { stream?: unknown })?.stream === true) {
      await streamNative(api, native.stream(call), req, res, opts);
      return;
    }
    const { requestId, response } = await native.call(call);
    res.setHeader('x-request-id', requestId);
    res.status(response.status).json(response.body);
  };
  router.post('/v1/responses', serve('responses'));
  router.post('/v1/messages', serve('messages'));
  router.post('/v1/messages/count_tokens', async (req: Request, res: Response) => {
    const identity = requireIdentity(req);
    res.json(await native.countTokens({ body: req.body, headers: req.headers, identity, traceId: req.traceId }));
  });

  const stored = (what: string) => (req: Request) => {
    requireIdentity(req);
    throw new NotImplementedError(`Unsupported: ${what} needs stored responses, and this gateway is stateless`, 'response_id');
  };
  router.get('/v1/responses/:response_id', stored('retrieving a response'));
  router.get('/v1/responses/:response_id/input_items', stored('listing input items'));
  router.post('/v1/responses/:response_id/cancel', stored('cancelling a response'));
  return router;
}

async function streamNative(api: NativeApi, starting: ReturnType<NativeService['stream']>, req: Request, res: Response, opts: StreamRouteOptions) {
  // Failures up to here (validation, balance, upstream before its first byte) are ordinary error responses.
  const started = await starting;
  const writer = new EventStreamWriter(res, { format: api, heartbeatMs: opts.heartbeatMs, headers: { 'x-request-id': started.requestId } });
  await relayStream(started.events, writer, {
    write: (event) => writer.event(event),
    finish: started.finish,
    drainMs: opts.drainMs,
    traceId: req.traceId,
    log: lazyChild(req.log, { requestId: started.requestId }),
  });
}
