import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { loadCatalog, readCatalog } from './load-catalog';

const REPO_CATALOG = path.resolve(__dirname, '../../../config/catalog.json');

describe('catalogue loading', () => {
  test('a provider whose key is not set is not routed, but billing still prices it', () => {
    const served = loadCatalog(REPO_CATALOG, {}).models.map((m) => m.id);
    expect(served).toContain('simulated/echo-chat');
    expect(served).not.toContain('openai/gpt-4o-mini');
    const withKey = loadCatalog(REPO_CATALOG, { OPENAI_API_KEY: 'sk-test' });
    expect(withKey.models.map((m) => m.id)).toContain('openai/gpt-4o-mini');
    expect(readCatalog(REPO_CATALOG).models.map((m) => m.id)).toContain('openai/gpt-4o-mini');
  });

  describe('refuses a broken file at startup', () => {
    let dir: string;
    beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'gw-catalog-')); });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const write = (content: unknown) => {
      const file = path.join(dir, 'catalog.json');
      writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
      return file;
    };
    const base = readCatalog(REPO_CATALOG);
    const cases: Array<[string, unknown, RegExp]> = [
      ['not JSON', '{', /Cannot read catalogue/],
      ['a price that is not a decimal', { ...base, models: [{ ...base.models[0], deployments: [{ ...base.models[0].deployments[0], price: { prompt_per_million: '1e-3', completion_per_million: '1' } }] }] }, /prompt_per_million/],
      ['an unknown provider', { ...base, models: [{ ...base.models[0], deployments: [{ ...base.models[0].deployments[0], provider: 'nope' }] }] }, /unknown provider nope/],
      ['a native batch route without a batch price', { ...base, models: [{ ...base.models[0], deployments: [{ ...base.models[0].deployments[0], native_batch: true }] }] }, /native_batch but no batch_price/],
      ['a duplicate model id', { ...base, models: [base.models[0], base.models[0]] }, /Duplicate model id/],
    ];
    test.each(cases)('%s', (_name, content, message) => {
      expect(() => readCatalog(write(content))).toThrow(message);
    });
  });
});
