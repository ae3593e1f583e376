import { Router, type Request, type Response } from 'express';
import { EventStreamWriter, lazyChild, requireIdentity } from '@gw/platform';
import { relayStream, type StreamRouteOptions } from '../billed-call/relay-stream';
import type { ChatService } from './chat-service';

/** `POST /v1/chat/completions`: JSON or server-sent events (`data: {chunk}` lines, then `data: [DONE]`). */
export function chatRoutes(chat: ChatService, opts: StreamRouteOptions): Router {
  const router = Router();
  router.post('/v1/chat/completions', async (req, res) => {
    const identity = requireIdentity(req);
    if ((req.body as { stream?: unknown })?.stream === true) {
      await streamCompletion(chat, req, res, opts);
      return;
    }
    const { requestId, completion } = await chat.complete(req.body, identity, req.traceId);
    res.setHeader('x-request-id', requestId);
    res.json(completion);
  });
  return router;
}

async function streamCompletion(chat: ChatService, req: Request, res: Response, opts: StreamRouteOptions) {
  // Failures up to here (validation, balance, upstream before its first byte) are ordinary error responses.
  const started = await chat.stream(req.body, requireIdentity(req), req.traceId);
  const writer = new EventStreamWriter(res, { format: 'chat', heartbeatMs: opts.heartbeatMs, headers: { 'x-request-id': started.requestId } });
  await relayStream(started.chunks, writer, {
    write: (chunk) => {
      const sent = started.clientChunk(chunk);
      if (sent) writer.event({ data: JSON.stringify(sent) });
    },
    trailer: { data: '[DONE]' },
    finish: started.finish,
    drainMs: opts.drainMs,
    traceId: req.traceId,
    log: lazyChild(req.log, { requestId: started.requestId }),
  });
}
