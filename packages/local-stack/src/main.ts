import { createLogger, installShutdown, startTracing } from '@gw/platform';
import * as path from 'node:path';
import { startLocalStack } from './local-stack';

/**
 * `scripts/start.sh` (compiled by scripts/build-gateway.sh): the whole gateway on one machine with the embedded
 * engines, a local account with credit, and the simulated models routed to the provider simulators on loopback
 * (every format on one port), so the first call works offline.
 */
async function main() {
  const logger = createLogger(null, process.env.LOG_LEVEL ?? 'warn');
  const env: NodeJS.ProcessEnv = { SIMULATOR_API_KEY: 'local-simulator', ...process.env };
  // scripts/start.sh passes the checkout's data/; the working directory's otherwise (never a build's own folder).
  const dataDir = path.resolve(env.DATA_DIR ?? 'data');
  // One tracer provider for every service of the process (off unless OTEL_EXPORTER_OTLP_ENDPOINT is set).
  const tracing = startTracing('gateway', env);
  const stack = await startLocalStack({ dataDir, env, logger, simulatorPort: Number(env.SIMULATOR_PORT ?? 4010) });
  installShutdown(logger.child({ service: 'local-stack' }), [
    { name: 'stack', run: () => stack.stop() },
    ...(tracing ? [{ name: 'tracing', run: () => tracing.shutdown() }] : []),
  ]);
  const base = `http://127.0.0.1:${stack.edge.httpPort}/v1`;
  const grpcPort = stack.services.find((s) => s.name === 'inference')?.grpcPort;
  process.stdout.write([
    '',
    `Gateway ready on ${base} (data in ${dataDir}).`,
    'Try it (the management key was printed above on first start; later starts reuse it):',
    `  curl ${base}/models`,
    `  curl ${base}/chat/completions -H "Authorization: Bearer $GATEWAY_KEY" -H 'content-type: application/json' \\`,
    `    -d '{"model":"simulated/echo-chat","messages":[{"role":"user","content":"hello gateway"}]}'`,
    `  curl ${base}/billing/balance -H "Authorization: Bearer $GATEWAY_KEY"`,
    `The inference gRPC API (server reflection on, no .proto needed) is on 127.0.0.1:${grpcPort}:`,
    `  grpcurl -plaintext 127.0.0.1:${grpcPort} list`,
    `The web console (sign in with the management key): http://127.0.0.1:${stack.edge.httpPort}/console/`,
    '',
  ].join('\n'));
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
