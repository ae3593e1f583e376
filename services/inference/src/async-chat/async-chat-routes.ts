import { Router } from 'express';
import { requireIdentity as identityOf } from '@gw/platform';
import type { AsyncChatService } from './async-chat-service';

/** `/v1/async/chat/completions`: submit, poll `/{job_id}`, cancel `/{job_id}/cancel`. */
export function asyncChatRoutes(service: AsyncChatService): Router {
  const router = Router();
  router.post('/v1/async/chat/completions', async (req, res) => {
    res.json(await service.submit(req.body, identityOf(req), req.traceId));
  });
  router.get('/v1/async/chat/completions/:job_id', async (req, res) => {
    res.json(await service.get(req.params.job_id, identityOf(req)));
  });
  router.post('/v1/async/chat/completions/:job_id/cancel', async (req, res) => {
    res.json(await service.cancel(req.params.job_id, identityOf(req)));
  });
  return router;
}
