import { isTerminalNativeBatchStatus, type NativeBatchHandle, type NativeBatchLineResult } from '@gw/provider-spec';
import { startAnthropicSimulator } from '../../../simulators/src';
import { useSimulatedUpstream } from '../testing/simulated-upstream';
import { AnthropicBatchProvider } from './anthropic-batch-provider';

/** What only Anthropic's batch API needs; what every batch adapter does is in native-batch-providers.test.ts. */
describe('Anthropic batch adapter', () => {
  const up = useSimulatedUpstream({
    start: () => startAnthropicSimulator(),
    create: (pools) => new AnthropicBatchProvider(pools),
    target: { apiKey: 'sk-ant-sim', providerModel: 'claude-echo' },
  });

  async function resultsOf(handle: NativeBatchHandle): Promise<NativeBatchLineResult[]> {
    for (let i = 0; i < 5 && !isTerminalNativeBatchStatus((await up.provider.poll(handle, up.target)).status); i++);
    const out: NativeBatchLineResult[] = [];
    for await (const r of up.provider.results(JSON.parse(JSON.stringify(handle)) as NativeBatchHandle, up.target)) out.push(r);
    return out;
  }

  it('reads a line that asked for JSON as the chat adapter would, from what the stored handle remembers', async () => {
    const handle = await up.provider.submit([
      { custom_id: 'json', request: { model: 'm', messages: [{ role: 'user', content: 'paris' }], response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } } } },
      { custom_id: 'plain', request: { model: 'm', messages: [{ role: 'user', content: 'paris' }] } },
    ], up.target);
    expect(handle.context).toEqual({ readHints: { json: { jsonToolName: 'answer', includeReasoning: false } } });
    const [json, plain] = await resultsOf(handle);
    expect(json).toMatchObject({ custom_id: 'json', outcome: 'succeeded', completion: { choices: [{ message: { content: '{"query":"paris"}' }, finish_reason: 'stop' }] } });
    expect(plain).toMatchObject({ custom_id: 'plain', outcome: 'succeeded', completion: { choices: [{ message: { content: 'Echo: paris' } }] } });
  });

  it('refuses a value the Anthropic chat adapter refuses, naming the line', async () => {
    const bad = { custom_id: 'hot', request: { model: 'm', messages: [{ role: 'user' as const, content: 'x' }], temperature: 1.5 } };
    await expect(up.provider.submit([bad], up.target)).rejects.toMatchObject({ status: 400, param: 'hot.body.temperature' });
  });
});
