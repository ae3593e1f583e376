import { Router, type Request } from 'express';
import { requireIdentity as identityOf } from '@gw/platform';
import type { BillingService } from './billing-service';
import type { Collection } from '@gw/store';
import { parseUsageQuery, queryUsage } from './stats/usage-query';
import type { UsageStatsRow } from './stats/usage-stats';

const REQUESTS_PREFIX = '/v1/billing/requests/';

/**
 * The rest of the path after the prefix, decoded, so provider ids containing slashes (raw or %2F) resolve.
 * The router has already refused a path that does not decode (400 naming `request_id`).
 */
function lookupId(req: Request): string {
  return decodeURIComponent(req.path.slice(REQUESTS_PREFIX.length));
}

export function billingRoutes(billing: BillingService, stats: Collection<UsageStatsRow>, now: () => Date): Router {
  const router = Router();
  router.get('/v1/usage', async (req, res) => {
    const { accountId } = identityOf(req);
    const query = parseUsageQuery(req.query as Record<string, unknown>, now().getTime());
    res.json({ object: 'list', data: await queryUsage(stats, accountId, query) });
  });
  router.get('/v1/billing/balance', async (req, res) => {
    const { accountId } = identityOf(req);
    res.json({ data: await billing.balanceUsd(accountId) });
  });
  router.get('/v1/billing/requests/*request_id', async (req, res) => {
    const { accountId } = identityOf(req);
    res.json({ data: await billing.requestRecord(accountId, lookupId(req)) });
  });
  return router;
}
