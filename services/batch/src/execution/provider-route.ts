import type { Catalog, Deployment } from '@gw/catalog';
import type { ChatTarget, NativeBatchProvider } from '@gw/provider-spec';

/** Where a provider-executed batch runs: the deployment, its provider's batch adapter and the upstream target. */
export interface ProviderBatchRoute {
  deployment: Deployment;
  providerName: string;
  provider: NativeBatchProvider;
  target: ChatTarget;
}

/** One adapter per wire format, shared by every batch of this instance (pooled upstream connections). */
export class NativeBatchProviders {
  private readonly byKind = new Map<string, NativeBatchProvider>();

  constructor(private readonly catalog: Catalog, private readonly create: (kind: string) => NativeBatchProvider, private readonly env: NodeJS.ProcessEnv) {}

  route(deploymentId: string): ProviderBatchRoute {
    for (const model of this.catalog.models) {
      const deployment = model.deployments.find((d) => d.id === deploymentId);
      if (!deployment) continue;
      const p = this.catalog.providers[deployment.provider];
      if (!p) break;
      let provider = this.byKind.get(p.kind);
      if (!provider) {
        provider = this.create(p.kind);
        this.byKind.set(p.kind, provider);
      }
      return {
        deployment, providerName: deployment.provider, provider,
        target: {
          baseUrl: p.base_url, apiKey: p.api_key_env ? this.env[p.api_key_env] : undefined, providerModel: deployment.provider_model,
          timeoutMs: p.timeout_ms, ...(p.api_version ? { apiVersion: p.api_version } : {}),
        },
      };
    }
    throw new Error(`Deployment ${deploymentId} is not in the catalogue (or its provider is not configured here)`);
  }

  async close(): Promise<void> {
    await Promise.all([...this.byKind.values()].map((p) => p.close?.()));
  }
}
