import { catalogSchema } from '@gw/catalog';
import { createLogger } from '@gw/platform';
import { createChatProvider } from '@gw/providers';
import type { ChatCompletionRequest } from '@gw/provider-spec';
import { DeploymentRouter } from '../routing/deployment-router';
import { routesHonouring } from './validate-chat-request';

// Routes are only listed here, never called: the base URL is unreachable on purpose.
const catalog = catalogSchema.parse({
  providers: {
    oa: { kind: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' },
    an: { kind: 'anthropic', base_url: 'http://127.0.0.1:9/v1' },
    ge: { kind: 'gemini', base_url: 'http://127.0.0.1:9/v1' },
  },
  models: [
    ['mixed', ['oa', 'an']], ['openai-only', ['oa']], ['anthropic-only', ['an']], ['gemini-only', ['ge']],
  ].map(([id, providers]) => ({
    id, name: id, owned_by: 't', updated_at: '2026-01-01', architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    deployments: (providers as string[]).map((p) => ({ id: `${id}-${p}`, provider: p, provider_model: 'x', price: { prompt_per_million: '1', completion_per_million: '1' } })),
  })),
});
const kinds = new Map(['openai-compatible', 'anthropic', 'gemini'].map((k) => [k, createChatProvider(k)]));
const router = new DeploymentRouter(catalog, (k) => kinds.get(k)!, {}, createLogger('test', 'silent'));
const model = (id: string) => catalog.models.find((m) => m.id === id)!;
const req = (id: string, fields: Partial<ChatCompletionRequest>): ChatCompletionRequest => ({ model: id, messages: [{ role: 'user', content: 'hi' }], ...fields });

afterAll(async () => { await Promise.all([...kinds.values()].map((p) => p.close?.())); });

describe('routing sends a request only where every parameter it sets is honoured', () => {
  it.each<[string, string, Partial<ChatCompletionRequest>, string[]]>([
    ['top_k goes only to the route that has it', 'mixed', { top_k: 40 }, ['mixed-an']],
    ['verbosity goes only to the route that has it', 'mixed', { verbosity: 'low' }, ['mixed-oa']],
    ['a plain request may use every route', 'mixed', { temperature: 0.5 }, ['mixed-an', 'mixed-oa']],
  ])('%s', (_what, id, fields, deployments) => {
    const serves = routesHonouring(req(id, fields), model(id), router);
    expect(router.candidates(model(id), serves).map((r) => r.deployment.id).sort()).toEqual(deployments);
  });

  it.each<[string, string, Partial<ChatCompletionRequest>, string]>([
    ['top_k on an OpenAI-compatible model', 'openai-only', { top_k: 40 }, 'top_k'],
    ['verbosity on Anthropic', 'anthropic-only', { verbosity: 'low' }, 'verbosity'],
    ['prompt_cache_key on Anthropic', 'anthropic-only', { prompt_cache_key: 'k' }, 'prompt_cache_key'],
    ['verbosity on Gemini', 'gemini-only', { verbosity: 'high' }, 'verbosity'],
    ['prompt_cache_key on Gemini', 'gemini-only', { prompt_cache_key: 'k' }, 'prompt_cache_key'],
    ['parallel_tool_calls false on Gemini', 'gemini-only', { parallel_tool_calls: false }, 'parallel_tool_calls'],
    ['provider_options anywhere', 'mixed', { provider_options: { region: 'eu' } }, 'provider_options'],
    ['context_length anywhere', 'mixed', { context_length: 1000 }, 'context_length'],
    ['network_search anywhere', 'mixed', { network_search: true }, 'network_search'],
    ['Anthropic\'s system prompt through extra_body', 'anthropic-only', { extra_body: { system: 'x' } }, 'extra_body.system'],
    ['Gemini\'s output cap through extra_body', 'gemini-only', { extra_body: { generationConfig: { maxOutputTokens: 99_999 } } }, 'extra_body.generationConfig.maxOutputTokens'],
  ])('%s is a 400 naming the param', (_what, id, fields, param) => {
    expect(() => routesHonouring(req(id, fields), model(id), router)).toThrow(expect.objectContaining({ status: 400, param, code: 'unsupported_parameter' }));
  });
});
