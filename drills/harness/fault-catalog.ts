import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { SimulatorFixture } from '@gw/simulators';

// The provider-faults drill's catalogue: each fault kind on a deployment of its own (cooldowns are per
// deployment), with a healthy fallback where the drill checks that the router moves on, and alone where it
// checks the error the client gets.

export const SLOW_FIRST_BYTE_MS = 1_500;
/** Shorter than SLOW_FIRST_BYTE_MS: a deployment on the slow simulator behind it times out. */
export const SHORT_DEADLINE_MS = 300;

const chunk = (delta: object) => `data: ${JSON.stringify({
  id: 'chatcmpl-drill', object: 'chat.completion.chunk', created: 1767225600, model: 'drill', choices: [{ index: 0, delta, finish_reason: null }],
})}\n\n`;

/** Canned upstream answers of the faulty simulator (model `sim-fixture-<name>`). */
export const FAULT_FIXTURES: Record<string, SimulatorFixture> = {
  // Two chunks, then the connection is gone: a provider dying mid-answer.
  'stream-drop': { body: chunk({ role: 'assistant', content: '' }) + chunk({ content: 'half an ans' }), dropConnection: true },
  'malformed-json': { body: '{"id":"chatcmpl-drill","object":"chat.completion","choices":[{"index":0,"message":' },
  'malformed-stream': { body: `${chunk({ role: 'assistant', content: '' })}data: {"id":"chatcmpl-drill","object":\n\ndata: [DONE]\n\n` },
};

export interface FaultSimulators {
  /** Answers the `sim-error-*` and `sim-fixture-*` models, in the OpenAI and Anthropic formats. */
  faulty: { url: string };
  /** Answers after SLOW_FIRST_BYTE_MS. */
  slow: { url: string };
  healthy: { url: string };
}

const PRICE = { prompt_per_million: '2.00', completion_per_million: '4.00' };

function model(id: string, deployments: Array<[id: string, provider: string, providerModel: string]>) {
  return {
    id, name: id, owned_by: 'Gateway simulator', updated_at: '2026-11-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
    per_request_limits: { prompt_tokens: 6000, completion_tokens: 2000 },
    deployments: deployments.map(([d, provider, providerModel]) => ({ id: d, provider, provider_model: providerModel, price: PRICE })),
  };
}

/** Writes the catalogue as `catalog.json` in `dir` (the caller's to remove). */
export function writeFaultCatalog(dir: string, sims: FaultSimulators): string {
  const provider = (kind: string, sim: { url: string }, timeoutMs: number) => ({ kind, base_url: `${sim.url}/v1`, api_key_env: 'SIMULATOR_API_KEY', timeout_ms: timeoutMs });
  const fallback = (id: string): [string, string, string] => [`${id}-fallback`, 'healthy', 'echo-chat'];
  const models = [
    model('drill/503', [['d503', 'faulty', 'sim-error-503'], fallback('d503')]),
    model('drill/503-alone', [['d503-alone', 'faulty', 'sim-error-503']]),
    model('drill/429', [['d429', 'faulty', 'sim-error-429'], fallback('d429')]),
    model('drill/429-alone', [['d429-alone', 'faulty', 'sim-error-429']]),
    model('drill/timeout', [['dtimeout', 'slow-short-deadline', 'echo-chat'], fallback('dtimeout')]),
    model('drill/timeout-alone', [['dtimeout-alone', 'slow-short-deadline', 'echo-chat']]),
    model('drill/slow-first-byte', [['dslow', 'slow', 'echo-chat'], fallback('dslow')]),
    model('drill/stream-drop', [['ddrop', 'faulty', 'sim-fixture-stream-drop'], fallback('ddrop')]),
    model('drill/native-drop', [['dnative-drop-openai', 'faulty', 'sim-drop'], ['dnative-drop-anthropic', 'faulty-anthropic', 'sim-drop']]),
    model('drill/malformed', [['dmalformed', 'faulty', 'sim-fixture-malformed-json'], fallback('dmalformed')]),
    model('drill/malformed-stream', [['dmalformed-stream', 'faulty', 'sim-fixture-malformed-stream'], fallback('dmalformed-stream')]),
  ];
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({
    providers: {
      faulty: provider('openai-compatible', sims.faulty, 10_000),
      'faulty-anthropic': provider('anthropic', sims.faulty, 10_000),
      slow: provider('openai-compatible', sims.slow, 10_000),
      'slow-short-deadline': provider('openai-compatible', sims.slow, SHORT_DEADLINE_MS),
      healthy: provider('openai-compatible', sims.healthy, 10_000),
    },
    models,
  }, null, 2));
  return file;
}
