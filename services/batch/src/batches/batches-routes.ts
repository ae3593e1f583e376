import { Router } from 'express';
import { requireIdentity } from '@gw/platform';
import { pageQuery } from '../list-page';
import type { BatchesService } from './batches-service';

export function batchesRoutes(batches: BatchesService): Router {
  const router = Router();
  router.get('/v1/batches/models', (req, res) => {
    requireIdentity(req);
    res.json(batches.models());
  });
  router.post('/v1/batches', async (req, res) => {
    res.json(await batches.create(requireIdentity(req), req.traceId, req.body));
  });
  router.get('/v1/batches', async (req, res) => {
    res.json(await batches.list(requireIdentity(req).accountId, pageQuery(req.query)));
  });
  router.get('/v1/batches/:batch_id', async (req, res) => {
    res.json(await batches.get(requireIdentity(req).accountId, req.params.batch_id));
  });
  router.post('/v1/batches/:batch_id/cancel', async (req, res) => {
    res.json(await batches.cancel(requireIdentity(req).accountId, req.params.batch_id));
  });
  return router;
}
