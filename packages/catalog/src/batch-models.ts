import { InputError, NotFoundError } from '@gw/platform';
import type { Catalog, CatalogModel, Deployment } from './schema';

/** Spec: Batch-supported model item (`GET /v1/batches/models`). */
export interface BatchModelItem {
  id: string;
  object: 'model';
  supports_batch: true;
  /** A native batch route exists, so `execution=auto` runs on the provider's batch API and `provider` is allowed. */
  supports_provider_batch: boolean;
  display_name: string;
  model_type: string;
}

export type BatchExecutionPreference = 'auto' | 'provider' | 'platform';
export const BATCH_EXECUTION_PREFERENCES: readonly BatchExecutionPreference[] = ['auto', 'provider', 'platform'];

export interface BatchExecution {
  execution: 'provider' | 'platform';
  /** True when `auto` found no native batch route and fell back to platform execution. */
  fallback_from_provider: boolean;
  /** The deployment whose provider batch API runs the batch; set for `provider` execution only. */
  deployment?: Deployment;
}

/**
 * The deployment a model's batches go to on the provider's batch API: its native batch deployments in routing
 * order (ascending `priority`, default the catalogue order). A batch is one upstream job, so the first one
 * takes it: weights split live traffic, not batches. None for a model whose template rules batches out.
 */
export function nativeBatchDeployment(model: CatalogModel): Deployment | undefined {
  if (!supportsBatch(model)) return undefined;
  const candidates = model.deployments
    .map((d, index) => ({ d, order: d.priority ?? index }))
    .filter(({ d }) => d.native_batch === true);
  candidates.sort((a, b) => a.order - b.order);
  return candidates[0]?.d;
}

/** The template flag `supports_batch`, true unless set to false. */
export function supportsBatch(model: CatalogModel): boolean {
  // Batches run chat lines only: a media model is never a batch model.
  return model.supports_batch !== false && !model.media;
}

/** Every model batches may use, as the batch model list shows them; a model with `supports_batch=false` is not listed. */
export function listBatchModels(catalog: Catalog): BatchModelItem[] {
  return catalog.models
    .filter(supportsBatch)
    .map((m) => ({
      id: m.id,
      object: 'model',
      supports_batch: true,
      supports_provider_batch: nativeBatchDeployment(m) !== undefined,
      display_name: m.name,
      model_type: m.model_type ?? 'LLM',
    }));
}

/**
 * Where a batch of `modelId` runs: `platform` as asked; `provider` on the native route, a 400 naming
 * `execution` when there is none; `auto` on the native route when there is one, else `platform` with the
 * fallback recorded. An unknown model is a 404 and a model batches may not use a 400, whatever was asked.
 */
export function resolveBatchExecution(catalog: Catalog, modelId: string, preference: BatchExecutionPreference): BatchExecution {
  const model = catalog.models.find((m) => m.id === modelId);
  if (!model) throw new NotFoundError(`Model '${modelId}' not found`, 'model', 'model_not_found');
  if (!supportsBatch(model)) throw new InputError(`Model '${modelId}' does not support batches`, 'model', 'model_not_batch_capable');
  if (preference === 'platform') return { execution: 'platform', fallback_from_provider: false };
  const deployment = nativeBatchDeployment(model);
  if (deployment) return { execution: 'provider', fallback_from_provider: false, deployment };
  if (preference === 'provider') {
    throw new InputError(`Model '${modelId}' has no provider batch route; use execution "auto" or "platform"`, 'execution', 'provider_batch_unavailable');
  }
  return { execution: 'platform', fallback_from_provider: true };
}
