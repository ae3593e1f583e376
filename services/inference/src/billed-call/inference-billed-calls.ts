import { BilledCalls } from '@gw/billed-call';
import type { CatalogModel } from '@gw/catalog';
import type { Logger } from '@gw/platform';
import type { Usage } from '@gw/provider-spec';
import type { DeploymentRouter, Route } from '../routing/deployment-router';
import type { CallBounds } from '../spend/spend-guard';
import type { SpendGrants } from '../spend/spend-grants';
import type { CallRecord, UsageRecorder } from '../usage/usage-recorder';

export type InferenceApi = CallRecord['apiType'];

/** One inference call as the lifecycle carries it: the model, the routes that serve it, and its spend bounds. */
export interface CallPlan {
  model: CatalogModel;
  serves: (route: Route) => boolean;
  /** The request as sent (its size bounds the prompt). */
  input: unknown;
  maxOutputTokens: number | null;
  choices: number;
}

export type InferenceBilledCalls = BilledCalls<Route, InferenceApi, Usage, CallPlan>;

export interface BilledCallDeps {
  router: DeploymentRouter;
  spend: Pick<SpendGrants, 'admit' | 'reserve' | 'release' | 'giveBack'>;
  usage: UsageRecorder;
  logger: Logger;
}

/** The billed-call lifecycle on this service's spend holds (billing), deployment router and usage recorder. */
export function inferenceBilledCalls(deps: BilledCallDeps): InferenceBilledCalls {
  return new BilledCalls({
    holds: {
      reserve: (identity, requestId, plan, traceId, ownHold) => (ownHold ? deps.spend.reserve : deps.spend.admit).call(deps.spend, identity, requestId, callBounds(deps.router, plan), traceId),
      release: (identity, hold, traceId) => deps.spend.giveBack(identity, hold, traceId),
    },
    router: { attempt: (plan, send, log) => deps.router.attempt(plan.model, send, plan.serves, log) },
    usage: {
      record: ({ identity, route, usage, ...call }) => deps.usage.record({
        ...call, accountId: identity.accountId, keyHash: identity.keyHash, providerName: route.providerName, deployment: route.deployment, usage: usage ?? {},
      }),
      failed: (call) => deps.usage.failed(call),
      openStream: (start) => deps.usage.openStream(start),
    },
    logger: deps.logger,
  });
}

/** What the call may cost at most: priced by billing at the dearest deployment it may fall back to. */
export function callBounds(router: DeploymentRouter, plan: CallPlan): CallBounds {
  return {
    model: plan.model,
    deployments: router.candidates(plan.model, plan.serves).map((r) => r.deployment.id),
    input: plan.input,
    maxOutputTokens: plan.maxOutputTokens,
    choices: plan.choices,
  };
}
