import type { Catalog, CatalogModel, Deployment, ProviderConfig } from '@gw/catalog';
import type { ChatProvider, ChatTarget } from '@gw/provider-spec';
import { isRetryableUpstreamError } from '@gw/provider-spec';
import type { Logger } from '@gw/platform';

export interface Route {
  deployment: Deployment;
  providerName: string;
  provider: ChatProvider;
  target: ChatTarget;
}

/**
 * Public model -> ordered deployments. `attempt` tries them in order and moves on only when the failure is
 * retryable (rate limit, 5xx, connection, timeout) and nothing has reached the caller yet.
 */
export class DeploymentRouter {
  private readonly routes = new Map<string, Route[]>();

  constructor(catalog: Catalog, providerFor: (kind: string) => ChatProvider, env: NodeJS.ProcessEnv, private readonly logger: Logger) {
    for (const model of catalog.models) {
      this.routes.set(model.id, model.deployments.map((d) => {
        const p = catalog.providers[d.provider] as ProviderConfig;
        return {
          deployment: d,
          providerName: d.provider,
          provider: providerFor(p.kind),
          target: {
            baseUrl: p.base_url,
            apiKey: p.api_key_env ? env[p.api_key_env] : undefined,
            providerModel: d.provider_model,
            timeoutMs: p.timeout_ms,
          },
        };
      }));
    }
  }

  async attempt<T>(model: CatalogModel, call: (route: Route) => Promise<T>): Promise<{ result: T; route: Route }> {
    const routes = this.routes.get(model.id) ?? [];
    let lastError: unknown;
    for (const route of routes) {
      try {
        return { result: await call(route), route };
      } catch (err) {
        lastError = err;
        if (!isRetryableUpstreamError(err)) throw err;
        this.logger.warn({ deployment: route.deployment.id, err: (err as Error).message }, 'deployment failed; trying the next one');
      }
    }
    throw lastError;
  }
}
