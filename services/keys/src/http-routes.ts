import { Router, type Request } from 'express';
import { NotFoundError, requireIdentity } from '@gw/platform';
import { parseCreateKey, parseListQuery, parseUpdateKey } from './key-input';
import { isKeyHash } from './key-secret';
import type { Caller, KeysService } from './keys-service';

export const KEY_ROUTE_PATHS = ['/v1/key', '/v1/keys'];

/** The identity the edge authenticated and signed; the shell refused requests that skipped the edge. */
function callerOf(req: Request): Caller {
  const id = requireIdentity(req);
  return { accountId: id.accountId, keyHash: id.keyHash, traceId: req.traceId };
}

/** A malformed hash can name no key: answer it like an unknown one. */
function hashParam(req: Request): string {
  const hash = String(req.params.hash).toLowerCase();
  if (!isKeyHash(hash)) throw new NotFoundError('No key with this hash', 'hash', 'key_not_found');
  return hash;
}

/** `GET /v1/key`, `GET|POST /v1/keys`, `PATCH|DELETE /v1/keys/:hash` (OpenRouter key-management shape). */
export function keysRouter(service: KeysService, now: () => Date = () => new Date()): Router {
  const router = Router();

  router.get('/v1/key', async (req, res) => {
    const { key, isManagement } = await service.currentKey(callerOf(req));
    res.json({ data: { ...key, is_management_key: isManagement } });
  });

  router.get('/v1/keys', async (req, res) => {
    const manager = await service.asManager(callerOf(req));
    const data = await service.list(manager, parseListQuery(req.query as Record<string, unknown>));
    res.json({ data });
  });

  router.post('/v1/keys', async (req, res) => {
    const manager = await service.asManager(callerOf(req));
    const { key, secret } = await service.create(manager, parseCreateKey(req.body, now()));
    res.status(201).json({ data: key, key: secret });
  });

  router.patch('/v1/keys/:hash', async (req, res) => {
    const manager = await service.asManager(callerOf(req));
    const data = await service.update(manager, hashParam(req), parseUpdateKey(req.body));
    res.json({ data });
  });

  router.delete('/v1/keys/:hash', async (req, res) => {
    const manager = await service.asManager(callerOf(req));
    await service.delete(manager, hashParam(req));
    res.json({ deleted: true });
  });

  router.all(['/v1/key', '/v1/keys', '/v1/keys/{*rest}'], (req) => {
    throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
  });
  return router;
}
