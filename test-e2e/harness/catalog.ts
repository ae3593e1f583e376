import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { videoModels, videoProvider } from './video-catalog';
import { mediaModels } from './media-catalog';

export const E2E_MODEL = 'e2e/echo-chat';
/** USD per million tokens; integer micros per token make expected charges exact. */
export const E2E_PRICE = { prompt_per_million: '2.00', completion_per_million: '4.00' };
/** A model whose first deployment always answers 503; the second serves at its own price. */
export const E2E_FALLBACK_MODEL = 'e2e/fallback-chat';
export const E2E_FAILING_PRICE = { prompt_per_million: '100.00', completion_per_million: '100.00' };
export const E2E_FALLBACK_PRICE = { prompt_per_million: '3.00', completion_per_million: '5.00' };
/** A model whose first deployment times out (the slow simulator behind a short deadline). */
export const E2E_TIMEOUT_FALLBACK_MODEL = 'e2e/timeout-fallback-chat';

/** Served by a second simulator instance that answers only after `E2E_SLOW_LATENCY_MS`: work to cancel or crash in. */
export const E2E_SLOW_MODEL = 'e2e/slow-chat';
export const E2E_SLOW_LATENCY_MS = 3_000;

/** Streams one chunk per 200 ms (the simulator's `sim-trickle`): streams still running when a service is killed. */
export const E2E_TRICKLE_MODEL = 'e2e/trickle-chat';
/** The same, in the Anthropic format, for `POST /v1/messages`. */
export const E2E_TRICKLE_MESSAGES_MODEL = 'e2e/trickle-messages';

/** Served by the simulator's Anthropic format, through `POST /v1/messages` only. */
export const E2E_CLAUDE_MODEL = 'e2e/claude-echo';
/**
 * Deployed on both the OpenAI and the Anthropic format, so each native API finds the one it can use; the provider
 * model is a simulator knob: `sim-drop` cuts a stream after its first events, `sim-error-500` fails before any byte.
 */
export const E2E_NATIVE_DROP_MODEL = 'e2e/native-drop';
export const E2E_NATIVE_ERROR_MODEL = 'e2e/native-error';

/** Batches of these run on the simulator's provider batch APIs (OpenAI files + batches, Anthropic message batches). */
export const E2E_BATCH_OPENAI_MODEL = 'e2e/batch-openai';
export const E2E_BATCH_ANTHROPIC_MODEL = 'e2e/batch-anthropic';
/** Provider batches of these end `expired` upstream: the first half of the lines answered, the rest `batch_expired`. */
export const E2E_BATCH_EXPIRE_OPENAI_MODEL = 'e2e/batch-expire-openai';
export const E2E_BATCH_EXPIRE_ANTHROPIC_MODEL = 'e2e/batch-expire-anthropic';
/** A provider batch line's price: half of E2E_PRICE. */
export const E2E_BATCH_PRICE = { prompt_per_million: '1.00', completion_per_million: '2.00' };
/** A model whose template rules batches out (`supports_batch: false`), though its deployment has a native route. */
export const E2E_NO_BATCH_MODEL = 'e2e/no-batch';

/**
 * A catalogue routing the e2e models to the simulator on `simulatorPort` (every provider format on that one port)
 * and the slow model to the one on `slowSimulatorPort`, written as `catalog.json` in `dir` (the caller's to remove).
 */
export function writeE2ECatalog(dir: string, simulatorPort: number, slowSimulatorPort: number): string {
  const file = path.join(dir, 'catalog.json');
  const provider = (kind: string, port: number) => ({ kind, base_url: `http://127.0.0.1:${port}/v1`, api_key_env: 'SIMULATOR_API_KEY', timeout_ms: 10_000 });
  writeFileSync(file, JSON.stringify({
    providers: {
      simulator: provider('openai-compatible', simulatorPort),
      'slow-simulator': provider('openai-compatible', slowSimulatorPort),
      'slow-simulator-short-deadline': { ...provider('openai-compatible', slowSimulatorPort), timeout_ms: 300 },
      'anthropic-simulator': provider('anthropic', simulatorPort),
      'gemini-simulator': { ...provider('gemini', simulatorPort), base_url: `http://127.0.0.1:${simulatorPort}/v1beta` },
      'ark-simulator': videoProvider(simulatorPort),
      'espeak-ng': { kind: 'espeak-ng', base_url: 'local://espeak-ng', timeout_ms: 30_000 },
      pocketsphinx: { kind: 'pocketsphinx', base_url: 'local://pocketsphinx', timeout_ms: 60_000 },
    },
    models: [...formatModels(), {
      id: E2E_MODEL,
      name: 'E2E echo chat',
      owned_by: 'Gateway simulator',
      updated_at: '2026-11-01T00:00:00Z',
      description: 'Simulated model for end-to-end tests.',
      architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
      context_length: 8192,
      per_request_limits: { prompt_tokens: 6000, completion_tokens: 2000 },
      parameter_schema: {
        temperature: { type: 'number', options: null, default: 1, min: 0, max: 2 },
        max_completion_tokens: { type: 'integer', options: null, default: null, min: 1, max: 2000 },
        stop: { type: 'array', options: null, default: null, min: null, max: null, max_items: 4 },
      },
      deployments: [{ id: 'e2e-simulator', provider: 'simulator', provider_model: 'echo-chat', price: E2E_PRICE }],
    }, {
      id: E2E_FALLBACK_MODEL,
      name: 'E2E fallback chat',
      owned_by: 'Gateway simulator',
      updated_at: '2026-11-01T00:00:00Z',
      architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
      deployments: [
        { id: 'e2e-failing', provider: 'simulator', provider_model: 'sim-error-503', price: E2E_FAILING_PRICE },
        { id: 'e2e-fallback', provider: 'simulator', provider_model: 'echo-chat', price: E2E_FALLBACK_PRICE },
      ],
    }, {
      id: E2E_TRICKLE_MODEL,
      name: 'E2E trickling chat',
      owned_by: 'Gateway simulator',
      updated_at: '2026-11-01T00:00:00Z',
      architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
      deployments: [{ id: 'e2e-trickle', provider: 'simulator', provider_model: 'sim-trickle', price: E2E_PRICE }],
    }, ...slowModels(), ...nativeModels(), ...batchModels(), ...mediaModels(), ...videoModels()],
  }, null, 2));
  return file;
}

/** Models on the slow simulator: work to cancel or crash in, and a deadline to fall back from. */
function slowModels() {
  return [{
    id: E2E_SLOW_MODEL,
    name: 'E2E slow chat',
    owned_by: 'Gateway simulator',
    updated_at: '2026-11-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
    deployments: [{ id: 'e2e-slow-simulator', provider: 'slow-simulator', provider_model: 'echo-chat', price: E2E_PRICE }],
  }, {
    id: E2E_TIMEOUT_FALLBACK_MODEL,
    name: 'E2E timeout fallback chat',
    owned_by: 'Gateway simulator',
    updated_at: '2026-11-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
    deployments: [
      { id: 'e2e-timing-out', provider: 'slow-simulator-short-deadline', provider_model: 'echo-chat', price: E2E_FAILING_PRICE },
      { id: 'e2e-timeout-fallback', provider: 'simulator', provider_model: 'echo-chat', price: E2E_FALLBACK_PRICE },
    ],
  }];
}

function nativeModels() {
  const model = (id: string, deployments: object[]) => ({
    id, name: id, owned_by: 'Gateway simulator', updated_at: '2026-11-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
    per_request_limits: { prompt_tokens: 6000, completion_tokens: 2000 },
    parameter_schema: { temperature: { type: 'number', options: null, default: 1, min: 0, max: 1 } },
    deployments,
  });
  const onBoth = (id: string, providerModel: string) => model(id, [
    { id: `${id}-openai`, provider: 'simulator', provider_model: providerModel, price: E2E_PRICE },
    { id: `${id}-anthropic`, provider: 'anthropic-simulator', provider_model: providerModel, price: E2E_PRICE },
  ]);
  return [
    model(E2E_CLAUDE_MODEL, [{ id: 'e2e-anthropic-simulator', provider: 'anthropic-simulator', provider_model: 'claude-echo', price: E2E_PRICE }]),
    onBoth(E2E_NATIVE_DROP_MODEL, 'sim-drop'),
    onBoth(E2E_NATIVE_ERROR_MODEL, 'sim-error-500'),
    model(E2E_TRICKLE_MESSAGES_MODEL, [{ id: 'e2e-trickle-anthropic', provider: 'anthropic-simulator', provider_model: 'sim-trickle', price: E2E_PRICE }]),
  ];
}

/** Models with a native batch route on the simulator (the `sim-batch-expire` provider model ends its batches expired). */
function batchModels() {
  const model = (id: string, provider: string, providerModel: string, extra: object = {}) => ({
    id, name: id, owned_by: 'Gateway simulator', updated_at: '2026-11-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
    ...extra,
    deployments: [{ id: `${id.replace('/', '-')}`, provider, provider_model: providerModel, price: E2E_PRICE, native_batch: true, batch_price: E2E_BATCH_PRICE }],
  });
  return [
    model(E2E_BATCH_OPENAI_MODEL, 'simulator', 'echo-chat'),
    model(E2E_BATCH_ANTHROPIC_MODEL, 'anthropic-simulator', 'claude-echo'),
    model(E2E_BATCH_EXPIRE_OPENAI_MODEL, 'simulator', 'sim-batch-expire'),
    model(E2E_BATCH_EXPIRE_ANTHROPIC_MODEL, 'anthropic-simulator', 'sim-batch-expire'),
    model(E2E_NO_BATCH_MODEL, 'simulator', 'echo-chat', { supports_batch: false }),
  ];
}

/** Chat models per upstream wire format, so the same client code is checked against each translator. */
export const E2E_FORMATS = [
  { format: 'openai', provider: 'simulator' },
  { format: 'anthropic', provider: 'anthropic-simulator' },
  { format: 'gemini', provider: 'gemini-simulator' },
] as const;
export const formatModel = (format: string, variant: 'echo' | 'tools') => `e2e/${format}-${variant}`;

function formatModels() {
  return E2E_FORMATS.flatMap(({ format, provider }) => (['echo', 'tools'] as const).map((variant) => ({
    id: formatModel(format, variant),
    name: `E2E ${format} ${variant}`,
    owned_by: 'Gateway simulator',
    updated_at: '2026-11-01T00:00:00Z',
    architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
    deployments: [{ id: `e2e-${format}-${variant}`, provider, provider_model: variant === 'tools' ? 'sim-tools' : `${format}-echo`, price: E2E_PRICE }],
  })));
}
