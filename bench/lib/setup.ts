/** What the benchmark sets up: the catalogue routing the public model to the simulator, the request body, the commit. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './children';
import { HOST } from './net';

export const PUBLIC_MODEL = 'bench/echo-chat';
export const PROVIDER_MODEL = 'echo-chat';
export const PRICE = { prompt_per_million: '2.00', completion_per_million: '4.00' };
/** An image model on the simulator's OpenAI images API: a call that bills media ids. */
export const IMAGE_MODEL = 'bench/image';
export const IMAGE_PRICE = { prompt_per_million: '0', completion_per_million: '0', per_image: '0.040000' };

export function writeCatalog(dir: string, simulatorPort: number): string {
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({
    providers: {
      simulator: { kind: 'openai-compatible', base_url: `http://${HOST}:${simulatorPort}/v1`, api_key_env: 'SIMULATOR_API_KEY', timeout_ms: 10_000 },
    },
    models: [{
      id: PUBLIC_MODEL,
      name: 'Benchmark echo chat (simulator)',
      owned_by: 'Gateway simulator',
      updated_at: '2026-11-01T00:00:00Z',
      description: 'The OpenAI-format simulator, for the overhead benchmark.',
      architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
      context_length: 8192,
      per_request_limits: { prompt_tokens: 6000, completion_tokens: 2000 },
      parameter_schema: {
        temperature: { type: 'number', options: null, default: 1, min: 0, max: 2 },
        max_completion_tokens: { type: 'integer', options: null, default: null, min: 1, max: 2000 },
        stop: { type: 'array', options: null, default: null, min: null, max: null, max_items: 4 },
      },
      deployments: [{ id: 'bench-simulator', provider: 'simulator', provider_model: PROVIDER_MODEL, price: PRICE }],
    }, {
      id: IMAGE_MODEL,
      name: 'Benchmark images (simulator)',
      owned_by: 'Gateway simulator',
      updated_at: '2026-11-01T00:00:00Z',
      media: 'image',
      architecture: { input_modalities: ['text'], output_modalities: ['image'], tokenizer: null },
      parameter_schema: { n: { type: 'integer', options: null, default: null, min: 1, max: 4 } },
      deployments: [{ id: 'bench-simulator-image', provider: 'simulator', provider_model: 'gpt-image-1', price: IMAGE_PRICE }],
    }],
  }, null, 2));
  return file;
}

export function chatBody(model: string, stream = false): string {
  return JSON.stringify({
    model,
    ...(stream ? { stream: true } : {}),
    messages: [
      { role: 'system', content: 'You are a concise assistant for a platform team.' },
      { role: 'user', content: 'In two sentences, what does an inference gateway do for the teams that call models through it?' },
    ],
    max_completion_tokens: 64,
    temperature: 0.2,
  });
}

export function gitRevision(checkout = ROOT): string | null {
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: checkout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: checkout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${rev}+dirty` : rev;
  } catch {
    return null;
  }
}
