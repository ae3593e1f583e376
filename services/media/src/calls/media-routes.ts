import type { Catalog, CatalogModel, Deployment } from '@gw/catalog';
import { InputError, NotFoundError, type Logger } from '@gw/platform';
import { isRetryableUpstreamError, type MediaProvider, type MediaTarget } from '@gw/provider-spec';
import { createMediaProvider } from '@gw/providers';

export type MediaKind = NonNullable<CatalogModel['media']>;

/** One deployment of a media model: its provider's wire format and where to call it. */
export interface MediaRoute {
  providerName: string;
  deployment: Deployment;
  provider: MediaProvider;
  target: MediaTarget;
}

const ENDPOINT_OF: Record<MediaKind, string> = {
  image: 'POST /v1/images/generations', transcription: 'POST /v1/audio/transcriptions', speech: 'POST /v1/audio/speech', video: 'POST /v1/videos',
};

/**
 * The media models of the catalogue and their routes, in the order a call tries them (priority, then
 * catalogue order). One provider per wire format, created once.
 */
export class MediaRouter {
  private readonly models = new Map<string, { model: CatalogModel; routes: MediaRoute[] }>();
  private readonly providers = new Map<string, MediaProvider>();
  /** Chat models: named on a media endpoint, a 400 saying where they belong. */
  private readonly chatModels = new Set<string>();

  constructor(catalog: Catalog, env: NodeJS.ProcessEnv, private readonly logger: Logger, timeoutMs: number) {
    for (const model of catalog.models) {
      if (!model.media) {
        this.chatModels.add(model.id);
        continue;
      }
      const ordered = model.deployments.map((d, i) => ({ d, i })).sort((a, b) => (a.d.priority ?? a.i) - (b.d.priority ?? b.i) || a.i - b.i);
      this.models.set(model.id, {
        model,
        routes: ordered.map(({ d }) => {
          const p = catalog.providers[d.provider]!;
          return {
            providerName: d.provider, deployment: d, provider: this.providerFor(p.kind),
            target: { baseUrl: p.base_url, apiKey: p.api_key_env ? env[p.api_key_env] : undefined, providerModel: d.provider_model, timeoutMs: Math.min(p.timeout_ms, timeoutMs) },
          };
        }),
      });
    }
  }

  /** The media model of `kind` named `id`: 404 naming `model` when unknown, 400 when it serves another endpoint. */
  model(id: unknown, kind: MediaKind): { model: CatalogModel; routes: MediaRoute[] } {
    if (id === undefined || id === null || id === '') throw new InputError('model is required', 'model', 'missing_required_parameter');
    // A form that sends model twice gives an array here.
    if (typeof id !== 'string') throw new InputError('model must be one string', 'model', 'invalid_type');
    const entry = this.models.get(id);
    if (!entry && this.chatModels.has(id)) throw new InputError(`Model '${id}' is a chat model: use POST /v1/chat/completions`, 'model', 'unsupported_api');
    if (!entry) throw new NotFoundError(`Model '${id}' not found`, 'model', 'model_not_found');
    if (entry.model.media !== kind) throw new InputError(`Model '${id}' is a ${entry.model.media} model: use ${ENDPOINT_OF[entry.model.media!]}`, 'model', 'unsupported_api');
    return entry;
  }

  /** Tries the routes in order, falling back to the next on a retryable failure (rate limit, 5xx, timeout, connection). */
  async attempt<T>(routes: MediaRoute[], send: (route: MediaRoute) => Promise<T>, log: Logger): Promise<{ result: T; route: MediaRoute }> {
    let last: unknown;
    for (const route of routes) {
      try {
        return { result: await send(route), route };
      } catch (err) {
        last = err;
        if (!isRetryableUpstreamError(err)) throw err;
        log.warn({ err, deployment: route.deployment.id }, 'media deployment failed; trying the next one');
      }
    }
    throw last;
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map((p) => p.close?.()));
  }

  private providerFor(kind: string): MediaProvider {
    let provider = this.providers.get(kind);
    if (!provider) this.providers.set(kind, (provider = createMediaProvider(kind)));
    return provider;
  }
}
