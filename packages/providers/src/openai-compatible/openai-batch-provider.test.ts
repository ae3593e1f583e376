import { startOpenAISimulator } from '../../../simulators/src';
import { useSimulatedUpstream } from '../testing/simulated-upstream';
import { OpenAIBatchProvider } from './openai-batch-provider';

/** What only OpenAI's batch API has; what every batch adapter does is in native-batch-providers.test.ts. */
describe('OpenAI batch adapter', () => {
  const up = useSimulatedUpstream({
    start: () => startOpenAISimulator(),
    create: (pools) => new OpenAIBatchProvider(pools),
    target: { apiKey: 'sk-sim', providerModel: 'gpt-4o-mini' },
  });
  const line = (key: string) => ({ custom_id: key, request: { model: 'public/m', messages: [{ role: 'user' as const, content: 'hi' }] } });

  it('reports a batch the provider failed as a whole: failed, no results, and why', async () => {
    const target = up.withModel('sim-batch-fail');
    const handle = await up.provider.submit([line('a')], target);
    expect(await up.provider.poll(handle, target)).toEqual({
      status: 'failed', upstreamStatus: 'failed', hasResults: false, counts: { total: 0, succeeded: 0, failed: 0 },
      error: { code: 'invalid_request', message: 'Simulated validation failure.' },
    });
  });

  it('sends the same idempotency key on a repeated submit, so the upstream makes one batch', async () => {
    const first = await up.provider.submit([line('a')], up.target, { idempotencyKey: 'gw-batch-1', gatewayBatchId: 'batch_gw1' });
    const again = await up.provider.submit([line('a')], up.target, { idempotencyKey: 'gw-batch-1', gatewayBatchId: 'batch_gw1' });
    expect(again.id).toBe(first.id);
    const listed = await (await fetch(`${up.sim.baseUrl}/batches`, { headers: { authorization: 'Bearer sk-sim' } })).json() as { data: Array<{ id: string; metadata: unknown }> };
    expect(listed.data.find((b) => b.id === first.id)?.metadata).toEqual({ gateway_batch_id: 'batch_gw1' });
  });
});
