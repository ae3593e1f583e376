import { Router, type Request } from 'express';
import { InputError, requireIdentity as identityOf } from '@gw/platform';
import type { BillingService } from './billing-service';

const REQUESTS_PREFIX = '/v1/billing/requests/';

/** The rest of the path after the prefix, decoded, so provider ids containing slashes (raw or %2F) resolve. */
function lookupId(req: Request): string {
  const raw = req.path.slice(REQUESTS_PREFIX.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new InputError('The request id is not validly URL-encoded', 'request_id');
  }
}

export function billingRoutes(billing: BillingService): Router {
  const router = Router();
  router.get('/v1/billing/balance', async (req, res) => {
    const { accountId } = identityOf(req);
    res.json({ data: await billing.balanceUsd(accountId) });
  });
  router.get('/v1/billing/requests/*id', async (req, res) => {
    const { accountId } = identityOf(req);
    res.json({ data: await billing.requestRecord(accountId, lookupId(req)) });
  });
  return router;
}
