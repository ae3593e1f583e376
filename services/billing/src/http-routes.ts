import { Router, type Request } from 'express';
import { requireIdentity as identityOf } from '@gw/platform';
import type { BillingService } from './billing-service';
import type { Collection } from '@gw/store';
import { parseUsageQuery, queryUsage } from './stats/usage-query';
import type { UsageStatsRow } from './stats/usage-stats';
import type { CallArchive } from './archive/call-archive';

const REQUESTS_PREFIX = '/v1/billing/requests/';
const ARCHIVE_SUFFIX = '/archive';

/**
 * The rest of the path after the prefix, decoded, so provider ids containing slashes (raw or %2F) resolve.
 * The router has already refused a path that does not decode (400 naming `request_id`).
 */
function lookupId(req: Request): string {
  return decodeURIComponent(req.path.slice(REQUESTS_PREFIX.length));
}

export interface BillingRouteDeps {
  billing: BillingService;
  stats: Collection<UsageStatsRow>;
  archive: CallArchive;
  now: () => Date;
}

export function billingRoutes({ billing, stats, archive, now }: BillingRouteDeps): Router {
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
  // Before the record's route, which would take `/archive` as part of a provider id (so an id ending in `/archive` is read as its archive).
  router.get('/v1/billing/requests/*request_id/archive', async (req, res) => {
    const { accountId } = identityOf(req);
    res.json({ data: await archive.lookup(accountId, lookupId(req).slice(0, -ARCHIVE_SUFFIX.length)) });
  });
  router.get('/v1/billing/requests/*request_id', async (req, res) => {
    const { accountId } = identityOf(req);
    res.json({ data: await billing.requestRecord(accountId, lookupId(req)) });
  });
  return router;
}
