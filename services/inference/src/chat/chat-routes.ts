import { Router, type Request, type Response } from 'express';
import { errorEnvelope, requireIdentity, toGatewayError } from '@gw/platform';
import type { ChatCompletionChunk } from '@gw/provider-spec';
import type { ChatService } from './chat-service';

/** `POST /v1/chat/completions`: JSON or server-sent events (`data: {chunk}` lines, then `data: [DONE]`). */
export function chatRoutes(chat: ChatService, drainMs: number): Router {
  const router = Router();
  router.post('/v1/chat/completions', async (req, res) => {
    const identity = requireIdentity(req);
    if ((req.body as { stream?: unknown })?.stream === true) {
      await streamCompletion(chat, req, res, drainMs);
      return;
    }
    const { requestId, completion } = await chat.complete(req.body, identity, req.traceId);
    res.setHeader('x-request-id', requestId);
    res.json(completion);
  });
  return router;
}

async function streamCompletion(chat: ChatService, req: Request, res: Response, drainMs: number) {
  const identity = requireIdentity(req);
  // Failures up to here (validation, balance, upstream before its first byte) are ordinary error responses.
  const started = await chat.stream(req.body, identity, req.traceId);
  const log = req.log.child({ requestId: started.requestId });
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('x-request-id', started.requestId);
  res.flushHeaders();

  let clientGone = false;
  res.on('close', () => { clientGone = !res.writableFinished; });
  let lastChunk: ChatCompletionChunk | null = null;
  let drainDeadline = 0;
  try {
    for await (const chunk of started.chunks) {
      if (chunk.choices.length > 0 || chunk.usage) lastChunk = mergeLast(lastChunk, chunk);
      if (clientGone) {
        // Keep reading (bounded) so what the provider generated is known and billed.
        drainDeadline ||= Date.now() + drainMs;
        if (Date.now() > drainDeadline) break;
        continue;
      }
      const isUsageChunk = chunk.choices.length === 0;
      if (isUsageChunk && !started.includeUsage) continue;
      const out = started.includeUsage ? chunk : stripUsage(chunk);
      res.write(`data: ${JSON.stringify(out)}\n\n`);
    }
    if (!clientGone) res.end('data: [DONE]\n\n');
  } catch (err) {
    const e = toGatewayError(err);
    log.warn({ err: e.message }, 'stream failed after the first byte');
    if (!clientGone) res.end(`data: ${JSON.stringify(errorEnvelope(e, req.traceId))}\n\n`);
  } finally {
    started.finish({ cancelled: clientGone, lastChunk });
  }
}

/** Keeps the id, model and finish reason seen last, for the usage record. */
function mergeLast(prev: ChatCompletionChunk | null, chunk: ChatCompletionChunk): ChatCompletionChunk {
  if (!prev || chunk.choices.some((c) => c.finish_reason)) return chunk;
  return prev;
}

function stripUsage(chunk: ChatCompletionChunk): ChatCompletionChunk {
  if (chunk.usage === undefined) return chunk;
  const { usage: _usage, ...rest } = chunk;
  return rest as ChatCompletionChunk;
}
