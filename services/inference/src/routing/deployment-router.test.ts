import { createLogger, Metrics } from '@gw/platform';
import { createChatProvider } from '@gw/providers';
import { startOpenAISimulator, type OpenAISimulator } from '@gw/simulators';
import type { Catalog, CatalogModel } from '@gw/catalog';
import { DeploymentRouter, type RoutingPolicy } from './deployment-router';
import { orderDeployments } from './order-deployments';

const price = { prompt_per_million: '1', completion_per_million: '1' };
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hello there' }] };

function catalogFor(sim: OpenAISimulator, providerModels: string[], timeoutMs = 5000): Catalog {
  return {
    providers: { sim: { kind: 'openai-compatible', base_url: sim.baseUrl, api_key_env: 'SIM_KEY', timeout_ms: timeoutMs } },
    models: [{
      id: 'm', name: 'm', owned_by: 'x', updated_at: '2026-01-01', description: '',
      architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
      context_length: null, default_parameters: {}, expiration_date: null, model_hub_id: null, knowledge_cutoff: null,
      per_request_limits: { prompt_tokens: null, completion_tokens: null }, parameter_schema: {}, supported_voices: null,
      deployments: providerModels.map((pm, i) => ({ id: `d${i}`, provider: 'sim', provider_model: pm, weight: 1, price })),
    }],
  };
}

describe('DeploymentRouter against the OpenAI simulator', () => {
  let sim: OpenAISimulator;
  const provider = createChatProvider('openai-compatible');
  const sleeps: number[] = [];
  const policy: RoutingPolicy = { maxRetries: 1, backoffMs: 10, maxBackoffMs: 2000, failuresBeforeCooldown: 2, cooldownMs: 60_000 };
  const routerFor = (catalog: Catalog) => new DeploymentRouter(catalog, () => provider, { SIM_KEY: 'k' }, createLogger('test', 'silent'), policy,
    async (ms) => { sleeps.push(ms); });

  beforeAll(async () => { sim = await startOpenAISimulator(); });
  afterAll(async () => { await provider.close?.(); await sim.close(); });
  beforeEach(() => { sleeps.length = 0; });

  const cases: Array<{ name: string; models: string[]; served: string | null; status?: number; sleeps: number[] }> = [
    { name: 'first deployment healthy', models: ['echo-chat', 'echo-chat'], served: 'd0', sleeps: [] },
    { name: '503 retried with backoff, then the next deployment serves', models: ['sim-error-503', 'echo-chat'], served: 'd1', sleeps: [10] },
    { name: '429 honours Retry-After, then falls back', models: ['sim-error-429', 'echo-chat'], served: 'd1', sleeps: [1000] },
    { name: 'a 400 is the caller’s fault: no retry, no fallback', models: ['sim-error-400', 'echo-chat'], served: null, status: 400, sleeps: [] },
    { name: 'every deployment failing surfaces the last failure', models: ['sim-error-500', 'sim-error-502'], served: null, status: 502, sleeps: [10, 10] },
  ];
  test.each(cases)('$name', async ({ models, served, status, sleeps: expectedSleeps }) => {
    const catalog = catalogFor(sim, models);
    const router = routerFor(catalog);
    const run = router.attempt(catalog.models[0] as CatalogModel, (r) => r.provider.chat(request, r.target));
    if (served) {
      const { route, result } = await run;
      expect(route.deployment.id).toBe(served);
      expect(result.completion.choices[0].message.content).toEqual(expect.any(String));
    } else {
      await expect(run).rejects.toMatchObject({ status });
    }
    expect(sleeps).toEqual(expectedSleeps);
  });

  test('no deployment the call accepts: an error naming the model, and nothing sent', async () => {
    const catalog = catalogFor(sim, ['echo-chat']);
    const before = sim.requests;
    await expect(routerFor(catalog).attempt(catalog.models[0], (r) => r.provider.chat(request, r.target), () => false))
      .rejects.toThrow(`No deployment for model ${catalog.models[0].id}`);
    expect(sim.requests).toBe(before);
  });

  test('a timeout falls back at once, without retrying the slow deployment', async () => {
    const slow = await startOpenAISimulator({ latencyMs: 1000 });
    try {
      const catalog: Catalog = {
        providers: {
          slow: { kind: 'openai-compatible', base_url: slow.baseUrl, api_key_env: 'SIM_KEY', timeout_ms: 100 },
          fast: { kind: 'openai-compatible', base_url: sim.baseUrl, api_key_env: 'SIM_KEY', timeout_ms: 5000 },
        },
        models: [{ ...catalogFor(sim, []).models[0], deployments: [
          { id: 'slow', provider: 'slow', provider_model: 'echo-chat', weight: 1, price },
          { id: 'fast', provider: 'fast', provider_model: 'echo-chat', weight: 1, price },
        ] }],
      };
      const { route } = await routerFor(catalog).attempt(catalog.models[0], (r) => r.provider.chat(request, r.target));
      expect(route.deployment.id).toBe('fast');
      expect(sleeps).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  test('a deployment that keeps failing cools down and is skipped', async () => {
    const catalog = catalogFor(sim, ['sim-error-503', 'echo-chat']);
    const router = routerFor(catalog);
    const model = catalog.models[0];
    await router.attempt(model, (r) => r.provider.chat(request, r.target)); // two failures: cooling now
    const before = sim.requests;
    const { route } = await router.attempt(model, (r) => r.provider.chat(request, r.target));
    expect(route.deployment.id).toBe('d1');
    expect(sim.requests - before).toBe(1);
    expect(router.candidates(model).map((r) => r.deployment.id)).toEqual(['d1']);
  });

  test('/metrics shows a cooling deployment as 1 while it cools, and 0 once it has cooled down', async () => {
    const catalog = catalogFor(sim, ['sim-error-503', 'echo-chat']);
    const metrics = new Metrics('inference', false);
    let now = 1_000_000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      const router = new DeploymentRouter(catalog, () => provider, { SIM_KEY: 'k' }, createLogger('test', 'silent'), policy, async () => {}, metrics);
      const cooling = async () => Object.fromEntries((await metrics.registry.getSingleMetric('gw_deployment_cooling')!.get()).values.map((v) => [v.labels.deployment, v.value]));
      expect(await cooling()).toEqual({ d0: 0, d1: 0 });
      await router.attempt(catalog.models[0], (r) => r.provider.chat(request, r.target));
      expect(await cooling()).toEqual({ d0: 1, d1: 0 });
      now += policy.cooldownMs + 1;
      expect(await cooling()).toEqual({ d0: 0, d1: 0 });
    } finally {
      clock.mockRestore();
    }
  });
});

describe('orderDeployments', () => {
  const d = (id: string, weight: number, priority?: number) => ({ id, weight, priority });
  test('catalogue order by default', () => {
    expect(orderDeployments([d('a', 1), d('b', 5), d('c', 1)], (x) => x).map((x) => x.id)).toEqual(['a', 'b', 'c']);
  });
  test('a shared priority splits first picks by weight', () => {
    const items = [d('a', 1, 0), d('b', 3, 0), d('z', 1, 1)];
    let seed = 0;
    const random = () => ((seed = (seed * 9301 + 49297) % 233280) / 233280);
    const firsts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const order = orderDeployments(items, (x) => x, random).map((x) => x.id);
      expect(order[2]).toBe('z');
      firsts.set(order[0], (firsts.get(order[0]) ?? 0) + 1);
    }
    expect(firsts.get('b')! / 4000).toBeGreaterThan(0.7);
    expect(firsts.get('b')! / 4000).toBeLessThan(0.8);
  });
});
