import { Router, type Request } from 'express';
import { InputError, NotFoundError, rejectUnknownFields, requireIdentity } from '@gw/platform';
import { pageQuery } from '@gw/store';
import type { Caller, PutSettingsInput, WebhooksService } from './webhooks-service';

const SETTINGS_FIELDS: ReadonlySet<string> = new Set(['url', 'rotate_secret']);
const MAX_URL_CHARS = 2048;

/** `PUT /v1/webhooks/settings`: `{url, rotate_secret?}`, each refused with a 400 naming it. */
function settingsInput(body: unknown): PutSettingsInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InputError('Request body must be a JSON object', 'body');
  const fields = body as Record<string, unknown>;
  rejectUnknownFields(fields, SETTINGS_FIELDS);
  const { url, rotate_secret: rotate = false } = fields;
  if (url === undefined) throw new InputError('url is required: an https URL, or null to remove the webhook', 'url');
  if (url !== null && (typeof url !== 'string' || url.length > MAX_URL_CHARS)) {
    throw new InputError(`url must be an https URL of at most ${MAX_URL_CHARS} characters, or null to remove the webhook`, 'url');
  }
  if (typeof rotate !== 'boolean') throw new InputError('rotate_secret must be true or false', 'rotate_secret');
  return { url, rotate_secret: rotate };
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
    res.json({ data: await service.putSettings(callerOf(req), settingsInput(req.body ?? {})) });
  });

  router.post('/v1/webhooks/test', async (req, res) => {
    res.status(202).json({ data: await service.sendTest(callerOf(req)) });
  });

  router.get('/v1/webhooks/deliveries', async (req, res) => {
    res.json(await service.deliveries(callerOf(req), pageQuery(req.query)));
  });

  router.all(['/v1/webhooks', '/v1/webhooks/{*rest}'], (req) => {
    throw new NotFoundError(`Unknown route: ${req.method} ${req.path}`, null, 'route_not_found');
  });
  return router;
}
