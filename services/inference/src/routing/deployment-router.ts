import type { Catalog, CatalogModel, Deployment, ProviderConfig } from '@gw/catalog';
import type { ChatProvider, ChatTarget } from '@gw/provider-spec';
import { isRetryableUpstreamError } from '@gw/provider-spec';
import { GatewayError, TimeoutError, UpstreamError, type Logger, type Metrics } from '@gw/platform';
import { CooldownTracker } from './cooldown';
import { orderDeployments } from './order-deployments';

export interface Route {
  deployment: Deployment;
  providerName: string;
  /** Wire format of the provider (`openai-compatible`, `anthropic`, ...). */
  kind: string;
  provider: ChatProvider;
  target: ChatTarget;
}

export interface RoutingPolicy {
  /** Extra tries on the same deployment for a rate limit, 5xx or connection failure. */
  maxRetries: number;
  /** First backoff; doubles per retry. A provider's Retry-After wins when it is not longer than `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Consecutive failures after which a deployment is skipped for `cooldownMs`. */
  failuresBeforeCooldown: number;
  cooldownMs: number;
}

export const DEFAULT_ROUTING_POLICY: RoutingPolicy = {
  maxRetries: 1, backoffMs: 100, maxBackoffMs: 2000, failuresBeforeCooldown: 3, cooldownMs: 30_000,
};

/**
 * Public model -> ordered deployments. `attempt` retries a deployment with backoff and then falls back to
 * the next one, only on retryable failures (rate limit, 5xx, connection, timeout) and only while nothing
 * has reached the caller: callers wrap the call up to the first byte, never a stream in flight.
 */
export class DeploymentRouter {
  private readonly routes = new Map<string, Route[]>();
  private readonly cooldown: CooldownTracker;

  constructor(
    catalog: Catalog,
    providerFor: (kind: string) => ChatProvider,
    env: NodeJS.ProcessEnv,
    private readonly logger: Logger,
    private readonly policy: RoutingPolicy = DEFAULT_ROUTING_POLICY,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
    /** Where attempts, retries, fallbacks and cooldowns are counted (the service's /metrics). */
    private readonly metrics: Metrics | null = null,
  ) {
    this.cooldown = new CooldownTracker(policy.failuresBeforeCooldown, policy.cooldownMs);
    for (const model of catalog.models) {
      this.routes.set(model.id, model.deployments.map((d) => {
        const p = catalog.providers[d.provider] as ProviderConfig;
        return {
          deployment: d,
          providerName: d.provider,
          kind: p.kind,
          provider: providerFor(p.kind),
          target: {
            baseUrl: p.base_url,
            apiKey: p.api_key_env ? env[p.api_key_env] : undefined,
            providerModel: d.provider_model,
            timeoutMs: p.timeout_ms,
            ...(p.api_version ? { apiVersion: p.api_version } : {}),
          },
        };
      }));
    }
    const deploymentIds = catalog.models.flatMap((m) => m.deployments.map((d) => d.id));
    metrics?.watchCooldowns(() => new Map(deploymentIds.map((id) => [id, this.cooldown.isCooling(id)])));
  }

  /** The model's routes in the order they would be tried now (weights, cooldowns applied). */
  candidates(model: CatalogModel, accept: (route: Route) => boolean = () => true): Route[] {
    const all = (this.routes.get(model.id) ?? []).filter(accept);
    const ordered = orderDeployments(all, (r) => r.deployment);
    const warm = ordered.filter((r) => !this.cooldown.isCooling(r.deployment.id));
    // When every deployment is cooling down, trying them beats refusing outright.
    return warm.length > 0 ? warm : ordered;
  }

  /** `log`: the call's logger (trace and request ids bound), for the fallbacks this call takes. */
  async attempt<T>(model: CatalogModel, call: (route: Route) => Promise<T>, accept?: (route: Route) => boolean, log: Logger = this.logger): Promise<{ result: T; route: Route }> {
    // Made only when it is thrown: an Error captures its stack when made (about 2 µs), on every call.
    let lastError: unknown = null;
    for (const route of this.candidates(model, accept)) {
      for (let tryNo = 0; ; tryNo++) {
        const attempt = { model: model.id, provider: route.providerName };
        try {
          const result = await call(route);
          this.cooldown.succeeded(route.deployment.id);
          this.metrics?.calls.total.inc({ ...attempt, status: 'ok' });
          return { result, route };
        } catch (err) {
          lastError = err;
          this.metrics?.calls.total.inc({ ...attempt, status: attemptStatus(err) });
          if (!isRetryableUpstreamError(err)) throw err;
          if (this.cooldown.failed(route.deployment.id)) this.metrics?.routing.cooldowns.inc({ deployment: route.deployment.id });
          if (err instanceof TimeoutError || tryNo >= this.policy.maxRetries) {
            log.warn({ deployment: route.deployment.id, err: (err as Error).message }, 'deployment failed; falling back');
            this.metrics?.routing.fallbacks.inc({ model: model.id, deployment: route.deployment.id });
            break;
          }
          this.metrics?.routing.retries.inc({ provider: route.providerName, deployment: route.deployment.id });
          await this.sleep(this.backoff(tryNo, err));
        }
      }
    }
    throw lastError ?? new Error(`No deployment for model ${model.id}`);
  }

  private backoff(tryNo: number, err: unknown): number {
    const exponential = Math.min(this.policy.backoffMs * 2 ** tryNo, this.policy.maxBackoffMs);
    const retryAfter = Number((err as { headers?: Record<string, string> }).headers?.['retry-after']);
    if (Number.isFinite(retryAfter) && retryAfter >= 0 && retryAfter * 1000 <= this.policy.maxBackoffMs) return retryAfter * 1000;
    return exponential;
  }
}

/** The provider's HTTP status when it answered, else what went wrong (`unreachable`, the gateway's status). */
function attemptStatus(err: unknown): string {
  if (err instanceof UpstreamError) return err.upstreamStatus === undefined ? 'unreachable' : String(err.upstreamStatus);
  return err instanceof GatewayError ? String(err.status) : 'error';
}
