import { Router } from 'express';
import { NotFoundError } from '@gw/platform';
import type { ModelDirectory } from './model-objects';

/** `GET /v1/models` and `GET /v1/models/{model_id}`; ids may contain slashes (`vendor/model`). */
export function modelRoutes(models: ModelDirectory): Router {
  const router = Router();
  router.get('/v1/models', (_req, res) => {
    res.type('application/json').send(models.listJson);
  });
  router.get('/v1/models/*model_id', (req, res) => {
    const parts = (req.params as { model_id: string[] }).model_id;
    const id = parts.join('/');
    const entry = models.get(id);
    if (!entry) throw new NotFoundError(`Model '${id}' not found`, 'model_id', 'model_not_found');
    res.json(entry.object);
  });
  return router;
}
