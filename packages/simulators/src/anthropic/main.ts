import { parseArgs } from 'node:util';
import { createLogger } from '@gw/platform';
import { startAnthropicSimulator } from './anthropic-simulator';

// Usage: tsx packages/simulators/src/anthropic/main.ts [--port 8082] [--latency-ms 0] [--host 127.0.0.1]
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
  const logger = createLogger('anthropic-simulator');
  const sim = await startAnthropicSimulator({ port, latencyMs, host: values.host });
  logger.info({ url: sim.url, latencyMs }, 'Anthropic simulator listening');

  const stop = () => {
    sim.close().then(() => process.exit(0), () => process.exit(1));
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
