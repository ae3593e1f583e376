import { parseArgs } from 'node:util';
import { createLogger, startTracing } from '@gw/platform';
import { startSimulators } from './simulators';

// Every provider format on one port (OpenAI /v1/chat/completions, /v1/responses, /v1/models, /v1/files,
// /v1/batches, /v1/videos; Anthropic /v1/messages, /v1/messages/batches; Gemini /v1beta/models/{m}:generateContent|streamGenerateContent;
// Seedance /api/v3/contents/generations/tasks).
// Usage: tsx packages/simulators/src/main.ts [--port 4010] [--latency-ms 0] [--host 127.0.0.1]
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      'latency-ms': { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
    },
  });
  const port = parseNonNegativeInt(values.port, '--port');
  const latencyMs = parseNonNegativeInt(values['latency-ms'], '--latency-ms');
  const logger = createLogger('simulators');
  const tracing = startTracing('provider-simulator');
  const sim = await startSimulators({ port, latencyMs, host: values.host });
  logger.info({ url: sim.url, latencyMs, formats: ['openai', 'anthropic', 'gemini', 'ark'] }, 'Provider simulators listening');

  const stop = () => {
    sim.close().then(() => tracing?.shutdown()).then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function parseNonNegativeInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} must be a non-negative integer, got "${value}"`);
  return n;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
