import type { Catalog, CatalogModel, Deployment } from '@gw/catalog';
import { InputError, NotFoundError } from '@gw/platform';
import type { ChatTarget, VideoProvider } from '@gw/provider-spec';
import { createVideoProvider, type VideoProviderDeps } from '@gw/providers';

/** One deployment of a video model, ready to call. */
export interface VideoRoute {
  deployment: Deployment;
  providerName: string;
  kind: string;
  provider: VideoProvider;
  target: ChatTarget;
}

/**
 * The video models of the catalogue and the adapters that serve them (one per wire format, created once:
 * each owns its connection pools). A deployment on a wire format without a video adapter fails at startup.
 */
export class VideoModels {
  private readonly providers = new Map<string, VideoProvider>();
  private readonly routes = new Map<string, VideoRoute[]>();
  private readonly models = new Map<string, CatalogModel>();

  constructor(catalog: Catalog, env: NodeJS.ProcessEnv, private readonly deps: VideoProviderDeps) {
    for (const model of catalog.models.filter((m) => m.media === 'video')) {
      this.models.set(model.id, model);
      this.routes.set(model.id, model.deployments.map((d) => {
        const p = catalog.providers[d.provider]!;
        return {
          deployment: d, providerName: d.provider, kind: p.kind, provider: this.providerFor(p.kind),
          target: { baseUrl: p.base_url, apiKey: p.api_key_env ? env[p.api_key_env] : undefined, providerModel: d.provider_model, timeoutMs: p.timeout_ms },
        };
      }));
    }
  }

  /** The video model named `model`: 404 for an unknown model, 400 for one that makes no videos. */
  model(id: string, known: (id: string) => boolean): CatalogModel {
    const model = this.models.get(id);
    if (model) return model;
    if (known(id)) throw new InputError(`Model ${id} does not generate videos`, 'model', 'unsupported_model');
    throw new NotFoundError(`Model '${id}' not found`, 'model', 'model_not_found');
  }

  /** The model's routes in catalogue priority order (lower first; catalogue order among equals). */
  routesOf(modelId: string): VideoRoute[] {
    return [...(this.routes.get(modelId) ?? [])].sort((a, b) => (a.deployment.priority ?? 0) - (b.deployment.priority ?? 0));
  }

  route(modelId: string, deploymentId: string): VideoRoute | undefined {
    return this.routes.get(modelId)?.find((r) => r.deployment.id === deploymentId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close?.()));
  }

  private providerFor(kind: string): VideoProvider {
    let provider = this.providers.get(kind);
    if (!provider) {
      provider = createVideoProvider(kind, this.deps);
      this.providers.set(kind, provider);
    }
    return provider;
  }
}
