import type { Server } from 'node:http';
import * as path from 'node:path';
import { catalogSchema, loadCatalog, type Catalog } from '@gw/catalog';
import { closeServer, createHttpApp, createLogger, finishHttpApp, Health, listen } from '@gw/platform';
import { chatCapabilities } from '@gw/providers';
import { ModelDirectory, toModelObject } from './model-objects';
import { modelRoutes } from './model-routes';

const logger = createLogger('models-test', 'silent');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (res: Response) => res.json() as Promise<any>;

const CATALOG: Catalog = catalogSchema.parse({
  providers: { sim: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'SIM_KEY' } },
  models: [
    {
      id: 'acme/voice-1.5',
      name: 'Acme: Voice 1.5',
      owned_by: 'Acme',
      updated_at: '2025-03-04T05:06:07Z',
      description: 'Speaks.',
      architecture: { input_modalities: ['text', 'audio'], output_modalities: ['audio'], tokenizer: 'acme-bpe' },
      context_length: 32000,
      default_parameters: { temperature: 0.7 },
      expiration_date: '2027-01-01',
      model_hub_id: 'acme/voice-1.5-hf',
      knowledge_cutoff: '2024-12',
      per_request_limits: { prompt_tokens: 30000, completion_tokens: 2000 },
      parameter_schema: {
        temperature: { type: 'number', default: 0.7, min: 0, max: 1.5 },
        voice: { type: 'string', options: ['alto', 'bass'], default: 'alto' },
        stop: { type: 'array', max_items: 2 },
      },
      supported_voices: ['alto', 'bass'],
      deployments: [{ id: 'acme-voice-secret-route', provider: 'sim', provider_model: 'internal-voice-v9', price: { prompt_per_million: '3.5', completion_per_million: '7' } }],
    },
    {
      id: 'org/team/deep/model',
      name: 'Deeply nested id',
      owned_by: 'Org',
      updated_at: '2024-07-18T00:00:00Z',
      architecture: { input_modalities: ['text'], output_modalities: ['text'] },
      deployments: [{ id: 'nested', provider: 'sim', provider_model: 'n', price: { prompt_per_million: '1', completion_per_million: '1' } }],
    },
  ],
});

const objectOf = (m: Catalog['models'][number]) => toModelObject(m, [chatCapabilities('openai-compatible')]);
const OPENAI_PARAMETERS = [
  'temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'max_completion_tokens', 'max_tokens', 'stream', 'stream_options',
  'tools', 'tool_choice', 'parallel_tool_calls', 'prompt_cache_key', 'user', 'safety_identifier', 'metadata', 'extra_body', 'reasoning', 'response_format',
  'logprobs', 'top_logprobs', 'stop', 'verbosity', 'seed', 'n', 'logit_bias',
];

describe('toModelObject', () => {
  it('carries every spec field', () => {
    expect(objectOf(CATALOG.models[0])).toEqual({
      id: 'acme/voice-1.5',
      object: 'model',
      created: Date.UTC(2025, 2, 4, 5, 6, 7) / 1000,
      owned_by: 'Acme',
      architecture: { input_modalities: ['text', 'audio'], output_modalities: ['audio'], tokenizer: 'acme-bpe' },
      canonical_slug: 'acme/voice-1.5',
      context_length: 32000,
      default_parameters: { temperature: 0.7 },
      description: 'Speaks.',
      expiration_date: '2027-01-01',
      model_hub_id: 'acme/voice-1.5-hf',
      knowledge_cutoff: '2024-12',
      links: { details: '/v1/models/acme/voice-1.5' },
      name: 'Acme: Voice 1.5',
      per_request_limits: { completion_tokens: 2000, prompt_tokens: 30000 },
      supported_parameters: OPENAI_PARAMETERS,
      parameter_schema: {
        temperature: { type: 'number', options: null, default: 0.7, min: 0, max: 1.5 },
        voice: { type: 'string', options: ['alto', 'bass'], default: 'alto', min: null, max: null },
        stop: { type: 'array', options: null, default: null, min: null, max: null, max_items: 2 },
      },
      supported_voices: ['alto', 'bass'],
    });
  });

  it('optional catalogue fields come out as the spec nulls and empties', () => {
    expect(objectOf(CATALOG.models[1])).toMatchObject({
      created: 1721260800, // 2024-07-18T00:00:00Z
      architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
      context_length: null, default_parameters: {}, description: '', expiration_date: null, model_hub_id: null,
      knowledge_cutoff: null, per_request_limits: { completion_tokens: null, prompt_tokens: null },
      supported_parameters: OPENAI_PARAMETERS, parameter_schema: {}, supported_voices: null,
    });
  });

  it('never leaks routing data (deployments, provider models, prices)', () => {
    const json = JSON.stringify(new ModelDirectory(CATALOG).listJson);
    for (const secret of ['deployments', 'acme-voice-secret-route', 'internal-voice-v9', 'price', 'SIM_KEY', '127.0.0.1:9']) {
      expect(json).not.toContain(secret);
    }
  });

  it('every model of the shipped catalogue has an integer created and its own id as slug', () => {
    const shipped = loadCatalog(path.resolve(__dirname, '../../../../config/catalog.json'), {});
    expect(shipped.models.length).toBeGreaterThan(0);
    for (const m of shipped.models) {
      const o = objectOf(m);
      expect(Number.isInteger(o.created)).toBe(true);
      expect(o.created).toBeGreaterThan(0);
      expect(o.canonical_slug).toBe(m.id);
    }
  });
});

describe('supported_parameters', () => {
  const shipped = new ModelDirectory(loadCatalog(path.resolve(__dirname, '../../../../config/catalog.json'), {}));
  const listed = (id: string) => new Set(shipped.get(id)!.object.supported_parameters);

  it.each([
    // [model, listed because its provider honours them, not listed because its provider cannot]
    ['simulated/echo-chat', ['tools', 'response_format', 'n', 'seed', 'verbosity', 'prompt_cache_key'], ['top_k']],
    ['simulated/claude-echo', ['tools', 'response_format', 'top_k', 'reasoning', 'user'], ['seed', 'n', 'verbosity', 'prompt_cache_key', 'logprobs']],
    ['simulated/gemini-echo', ['tools', 'response_format', 'n', 'top_k', 'seed'], ['verbosity', 'prompt_cache_key', 'parallel_tool_calls', 'logit_bias', 'user']],
  ])('%s lists what its provider honours', (id, honoured, refused) => {
    const params = listed(id);
    for (const p of honoured) expect(params.has(p)).toBe(true);
    for (const p of [...refused, 'context_length', 'provider_options', 'network_search', 'store', 'model', 'messages']) expect(params.has(p)).toBe(false);
  });

  it('is the union over a model\'s routes', () => {
    const mixed = catalogSchema.parse({
      providers: { a: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' }, b: { kind: 'anthropic', base_url: 'http://127.0.0.1:9/v1' } },
      models: [{
        id: 'm', name: 'm', owned_by: 'o', updated_at: '2025-01-01', architecture: { input_modalities: ['text'], output_modalities: ['text'] },
        deployments: ['a', 'b'].map((p) => ({ id: p, provider: p, provider_model: 'x', price: { prompt_per_million: '1', completion_per_million: '1' } })),
      }],
    });
    const params = new ModelDirectory(mixed).get('m')!.object.supported_parameters;
    expect(params).toEqual(expect.arrayContaining(['top_k', 'seed', 'verbosity']));
  });
});

describe('GET /v1/models and /v1/models/{model_id}', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    const app = createHttpApp({ logger, health: new Health(), bodyLimitBytes: 1024 });
    app.use(modelRoutes(new ModelDirectory(CATALOG)));
    finishHttpApp(app, logger);
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => closeServer(server, 0));

  it('lists every model as a Model object', async () => {
    const res = await fetch(`${base}/v1/models`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await json(res);
    expect(body.object).toBe('list');
    expect(body.data).toEqual(CATALOG.models.map(objectOf));
  });

  it.each([
    ['an id with one slash', '/v1/models/acme/voice-1.5', 'acme/voice-1.5'],
    ['an id with several slashes', '/v1/models/org/team/deep/model', 'org/team/deep/model'],
    ['an id with its slash percent-encoded (as SDKs send it)', '/v1/models/acme%2Fvoice-1.5', 'acme/voice-1.5'],
  ])('retrieves %s', async (_what, url, id) => {
    const res = await fetch(`${base}${url}`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual(objectOf(CATALOG.models.find((m) => m.id === id)!));
  });

  it('the links.details path of each model retrieves that model', async () => {
    for (const m of CATALOG.models) {
      const res = await fetch(`${base}${objectOf(m).links.details}`);
      expect((await json(res)).id).toBe(m.id);
    }
  });

  it.each([
    ['an unknown id', '/v1/models/acme/voice-2', 'acme/voice-2'],
    ['a prefix of a known id', '/v1/models/acme', 'acme'],
    ['a known id with an extra segment', '/v1/models/acme/voice-1.5/extra', 'acme/voice-1.5/extra'],
  ])('%s is a 404 envelope naming model_id', async (_what, url, id) => {
    const res = await fetch(`${base}${url}`);
    expect(res.status).toBe(404);
    const body = await json(res);
    expect(body.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found', param: 'model_id' });
    expect(body.error.message).toContain(id);
  });
});
