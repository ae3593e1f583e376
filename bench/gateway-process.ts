/**
 * The gateway under test as its own process: every service in one process with the embedded engines
 * (`startLocalStack`), configured only by the environment the benchmark passes (ports, seed account,
 * catalogue, DATA_DIR). Prints one `gateway ready` line (and sends `{ ready }` over IPC when spawned with
 * a channel) once the edge listens; stops cleanly on SIGTERM/SIGINT or when the parent goes away, so
 * `node --cpu-prof` can write its profile on the way out.
 */
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { createLogger, type Logger } from '@gw/platform';
import { startLocalStack } from '@gw/local-stack';

const STOP_TIMEOUT_MS = 15_000;

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR;
  if (!dataDir) throw new Error('DATA_DIR must be set (the benchmark passes a temp dir)');
  const logger = createLogger('gateway', process.env.LOG_LEVEL ?? 'warn');
  const env = await reconcileSeedAccounts(dataDir, process.env, logger);
  const stack = await startLocalStack({ dataDir, env, logger });

  let stopping = false;
  const stop = (code: number, orphaned = false) => {
    if (stopping) return;
    stopping = true;
    const hard = setTimeout(() => process.exit(code || 1), STOP_TIMEOUT_MS);
    hard.unref();
    stack.stop().then(
      () => {
        // The benchmark is gone and cannot remove its temp dir (data, catalogue) any more: do it for it.
        const tmp = process.env.BENCH_TEMP_DIR;
        if (orphaned && tmp && path.basename(tmp).startsWith('gw-bench-')) rmSync(tmp, { recursive: true, force: true });
        process.exit(code);
      },
      (err: unknown) => {
        process.stderr.write(`gateway stop failed: ${(err as Error)?.stack ?? err}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
  // The benchmark died without cleaning up: do not linger as an orphan holding ports.
  process.once('disconnect', () => stop(0, true));

  const edgePort = stack.edge.httpPort;
  process.stdout.write(`gateway ready on http://127.0.0.1:${edgePort} (pid ${process.pid})\n`);
  process.send?.({ ready: true, edgePort, pid: process.pid });
}

/**
 * Work-around, active only while needed: keys and billing both read SEED_ACCOUNTS, but keys' schema is
 * `.strict()` and refuses billing's fields (`credit_usd`, ...), so the documented
 * `[{"id","credit_usd","management_key"}]` stops the stack at start. When keys refuses the seeds, billing's
 * store is seeded first with the full seeds (billing's own start function; an existing account keeps its
 * balance), then the stack starts with the seeds reduced to what keys accepts (`id`, `management_key`).
 * The services under test are the same; only the seeding happens in two steps.
 */
async function reconcileSeedAccounts(dataDir: string, env: NodeJS.ProcessEnv, logger: Logger): Promise<NodeJS.ProcessEnv> {
  if (!env.SEED_ACCOUNTS) return env;
  // The services are dependencies of @gw/local-stack, not of the bench: resolve them from there.
  const fromStack = createRequire(require.resolve('@gw/local-stack'));
  const keys = fromStack('@gw/keys') as typeof import('../services/keys/src');
  try {
    keys.loadKeysConfig(env);
    return env;
  } catch (err) {
    if (!/SEED_ACCOUNTS/.test((err as Error).message)) throw err;
  }
  const billing = fromStack('@gw/billing') as typeof import('../services/billing/src');
  const { createStore } = fromStack('@gw/store') as typeof import('../packages/store/src');
  const { createBus } = fromStack('@gw/bus') as typeof import('../packages/bus/src');
  process.stderr.write('gateway: keys refuses billing fields in SEED_ACCOUNTS; seeding billing first, then starting the stack with {id, management_key}\n');
  // Same store layout as startLocalStack: <dataDir>/<name>.
  const busStore = createStore({ engine: 'embedded', dataDir: path.join(dataDir, 'bus') });
  const billingStore = createStore({ engine: 'embedded', dataDir: path.join(dataDir, 'billing') });
  const bus = createBus({ engine: 'embedded', store: busStore }, logger.child({ service: 'bus' }));
  try {
    const svc = await billing.startBillingService({ config: billing.loadBillingConfig(env), store: billingStore, bus, logger: logger.child({ service: 'billing-seed' }), host: '127.0.0.1' });
    await svc.stop();
  } finally {
    await bus.close();
    await billingStore.close();
    await busStore.close();
  }
  const seeds = JSON.parse(env.SEED_ACCOUNTS) as Array<{ id: string; management_key?: string }>;
  const forKeys = seeds.map(({ id, management_key }) => (management_key === undefined ? { id } : { id, management_key }));
  return { ...env, SEED_ACCOUNTS: JSON.stringify(forKeys) };
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway failed to start: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
