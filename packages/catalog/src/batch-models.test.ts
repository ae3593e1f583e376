import * as path from 'node:path';
import { GatewayError } from '@gw/platform';
import { listBatchModels, resolveBatchExecution, type BatchExecutionPreference } from './batch-models';
import { loadCatalog } from './load-catalog';
import { catalogSchema, type Catalog } from './schema';

const price = { prompt_per_million: '2.00', completion_per_million: '4.00' };
const batchPrice = { prompt_per_million: '1.00', completion_per_million: '2.00' };
const model = (id: string, deployments: object[], extra: object = {}) => ({
  id, name: `Name of ${id}`, owned_by: 'test', updated_at: '2026-11-01T00:00:00Z',
  architecture: { input_modalities: ['text'], output_modalities: ['text'] }, deployments, ...extra,
});
const dep = (id: string, extra: object = {}) => ({ id, provider: 'sim', provider_model: 'echo', price, ...extra });
const native = (id: string, extra: object = {}) => dep(id, { native_batch: true, batch_price: batchPrice, ...extra });

const catalog: Catalog = catalogSchema.parse({
  providers: { sim: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1' } },
  models: [
    model('platform-only', [dep('p1')]),
    model('native', [dep('n-live'), native('n-batch')]),
    model('native-by-priority', [native('np-second', { priority: 2 }), native('np-first', { priority: 1 }), dep('np-live', { priority: 0 })]),
    model('no-batch', [native('nb-batch')], { supports_batch: false }),
    model('embedder', [dep('e1')], { model_type: 'embedding' }),
  ],
});

describe('listBatchModels', () => {
  it('lists every batch-capable model with whether a provider batch route exists, never one with supports_batch=false', () => {
    expect(listBatchModels(catalog)).toEqual([
      { id: 'platform-only', object: 'model', supports_batch: true, supports_provider_batch: false, display_name: 'Name of platform-only', model_type: 'LLM' },
      { id: 'native', object: 'model', supports_batch: true, supports_provider_batch: true, display_name: 'Name of native', model_type: 'LLM' },
      { id: 'native-by-priority', object: 'model', supports_batch: true, supports_provider_batch: true, display_name: 'Name of native-by-priority', model_type: 'LLM' },
      { id: 'embedder', object: 'model', supports_batch: true, supports_provider_batch: false, display_name: 'Name of embedder', model_type: 'embedding' },
    ]);
  });

  it('shows the simulated native batch models of the default catalogue', () => {
    const items = listBatchModels(loadCatalog(path.resolve(__dirname, '../../../config/catalog.json'), {}));
    expect(items.find((i) => i.id === 'simulated/echo-chat-batch')?.supports_provider_batch).toBe(true);
    expect(items.find((i) => i.id === 'simulated/claude-echo-batch')?.supports_provider_batch).toBe(true);
    expect(items.find((i) => i.id === 'simulated/echo-chat')?.supports_provider_batch).toBe(false);
  });
});

describe('resolveBatchExecution', () => {
  it.each<[string, BatchExecutionPreference, object]>([
    ['native', 'auto', { execution: 'provider', fallback_from_provider: false, deployment: expect.objectContaining({ id: 'n-batch' }) }],
    ['native', 'provider', { execution: 'provider', fallback_from_provider: false, deployment: expect.objectContaining({ id: 'n-batch' }) }],
    ['native', 'platform', { execution: 'platform', fallback_from_provider: false }],
    ['native-by-priority', 'auto', { execution: 'provider', fallback_from_provider: false, deployment: expect.objectContaining({ id: 'np-first' }) }],
    ['platform-only', 'auto', { execution: 'platform', fallback_from_provider: true }],
    ['platform-only', 'platform', { execution: 'platform', fallback_from_provider: false }],
  ])('%s with %s', (id, preference, expected) => {
    expect(resolveBatchExecution(catalog, id, preference)).toEqual(expected);
  });

  it.each<[string, BatchExecutionPreference, number, string, string]>([
    ['platform-only', 'provider', 400, 'execution', 'provider_batch_unavailable'],
    ['no-batch', 'auto', 400, 'model', 'model_not_batch_capable'],
    ['no-batch', 'provider', 400, 'model', 'model_not_batch_capable'],
    ['no-batch', 'platform', 400, 'model', 'model_not_batch_capable'],
    ['nope', 'auto', 404, 'model', 'model_not_found'],
  ])('%s with %s is a %i naming %s', (id, preference, status, param, code) => {
    let thrown: unknown;
    try {
      resolveBatchExecution(catalog, id, preference);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect(thrown).toMatchObject({ status, param, code });
  });
});
