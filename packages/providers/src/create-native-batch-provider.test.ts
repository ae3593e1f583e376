import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readCatalog, type Catalog } from '../../catalog/src';
import { writeE2ECatalog } from '../../../test-e2e/harness/catalog';
import { createNativeBatchProvider, hasNativeBatchAdapter } from './create-native-batch-provider';

describe('createNativeBatchProvider', () => {
  it.each(['openai-compatible', 'anthropic'])('creates the %s batch adapter', async (kind) => {
    const provider = createNativeBatchProvider(kind);
    expect(provider.kind).toBe(kind);
    expect(hasNativeBatchAdapter(kind)).toBe(true);
    await provider.close?.();
  });

  it.each(['azure-openai', 'gemini'])('reports that %s has no batch adapter instead of guessing one', (kind) => {
    expect(hasNativeBatchAdapter(kind)).toBe(false);
    expect(() => createNativeBatchProvider(kind)).toThrow(/has no native batch adapter/);
  });

  it.each(['', 'OpenAI-Compatible', 'cohere'])('throws on unknown kind %j', (kind) => {
    expect(() => createNativeBatchProvider(kind)).toThrow(/Unknown chat provider kind/);
    expect(() => hasNativeBatchAdapter(kind)).toThrow(/Unknown chat provider kind/);
  });
});

describe('native batch routes of the shipped catalogues', () => {
  const e2eCatalog = (): Catalog => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gw-e2e-catalog-'));
    try {
      return readCatalog(writeE2ECatalog(dir, 1, 2));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  it.each<[string, () => Catalog]>([
    ['config/catalog.json', () => readCatalog(path.resolve(__dirname, '../../../config/catalog.json'))],
    ['the Helm chart catalogue', () => readCatalog(path.resolve(__dirname, '../../../deploy/helm/gateway/files/catalog.json'))],
    ['the e2e catalogue', e2eCatalog],
  ])('%s sets native_batch only where the wire format has a batch adapter', (_name, load) => {
    const catalog = load();
    const routes = catalog.models.flatMap((m) => m.deployments.filter((d) => d.native_batch === true).map((d) => ({ id: d.id, kind: catalog.providers[d.provider].kind })));
    expect(routes.length).toBeGreaterThan(0);
    expect(routes.filter((r) => !hasNativeBatchAdapter(r.kind))).toEqual([]);
  });
});
