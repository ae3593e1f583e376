import { Router, type Request } from 'express';
import { InputError, NotFoundError, requireIdentity } from '@gw/platform';
import { z } from 'zod';
import type { Caller, PutSettingsInput, WebhooksService } from './webhooks-service';

const putSettingsSchema = z.strictObject({
  url: z.string().max(2048).nullable(),
  rotate_secret: z.boolean().default(false),
});

const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().min(1).max(300).optional(),
});

/** The first offending field names the 400's `param`. */
function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.map(String).join('.') || null;
  throw new InputError(`Invalid ${what}: ${param ?? 'body'}: ${issue.message}`, param);
}

function callerOf(req: Request): Caller {
  const id = requireIdentity(req);
  return { accountId: id.accountId, isManagement: id.isManagement };
}

/** `GET|PUT /v1/webhooks/settings`, `POST /v1/webhooks/test`, `GET /v1/webhooks/deliveries`. */
export function webhooksRouter(service: WebhooksService): Router {
  const router = Router();

  router.get('/v1/webhooks/settings', async (req, res) => {
    res.json({ data: await service.settings(callerOf(req)) });
  });

  router.put('/v1/webhooks/settings', async (req, res) => {
    const input: PutSettingsInput = parse(putSettingsSchema, req.body ?? {}, 'webhook settings');
    res.json({ data: await service.putSettings(callerOf(req), input) });
  });

  router.post('/v1/webhooks/test', async (req, res) => {
    res.status(202).json({ data: await service.sendTest(callerOf(req)) });
  });

  router.get('/v1/webhooks/deliveries', async (req, res) => {
    const query = parse(listQuerySchema, req.query, 'query');
    res.json(await service.deliveries(callerOf(req), query.limit, query.after ?? null));
  });

  router.all(['/v1/webhooks', '/v1/webhooks/{*rest}'], (req) => {
    throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
  });
  return router;
}
