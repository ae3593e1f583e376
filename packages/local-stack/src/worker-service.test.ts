import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { BillingWorkerData } from './billing-worker';
import { startWorkerService, workerExecArgv } from './worker-service';

const BILLING_WORKER = path.join(__dirname, 'billing-worker.ts');

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Billing in a worker thread, as the single-process gateway runs it: its own ports, readiness and stop. */
describe('billing in a worker thread', () => {
  // A thread that ends between the listing and the read (a jest or V8 helper) is skipped.
  const threadNames = () => readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      return [readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()];
    } catch {
      return [];
    }
  });
  let dataDir: string;
  beforeEach(() => { dataDir = mkdtempSync(path.join(tmpdir(), 'gw-billing-worker-')); });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  const data = (env: NodeJS.ProcessEnv = {}): BillingWorkerData => ({
    dataDir,
    logLevel: 'silent',
    busWakeChannel: `gw-bus-test:${dataDir}`,
    env: { GATEWAY_IDENTITY_SECRET: randomBytes(32).toString('hex'), BILLING_HTTP_PORT: '0', BILLING_GRPC_PORT: '0', BIND_HOST: '127.0.0.1', ...env },
  });

  test('serves on its own ports, answers readiness from its own checks, and stops when asked', async () => {
    const exits: number[] = [];
    const billing = await startWorkerService(BILLING_WORKER, 'billing', data(), (code) => exits.push(code));
    try {
      expect(billing.name).toBe('billing');
      // The thread carries the name, so its CPU shows apart from the process's other threads (ps -T, /proc).
      if (process.platform === 'linux') expect(threadNames()).toContain('billing');
      expect(billing.httpPort).toBeGreaterThan(0);
      expect(billing.grpcPort).toBeGreaterThan(0);
      // The consumers join in the background: ready with nothing degraded once they have.
      await until('the consumers to join', async () => {
        const r = await billing.health.report();
        return r.ready && r.degraded.length === 0;
      });
      const report = await billing.health.report();
      expect(Object.keys(report.checks)).toEqual(expect.arrayContaining(['store', 'bus', 'usage-consumer', 'archive-consumer', 'call-failures-consumer']));
      const readyz = await fetch(`http://127.0.0.1:${billing.httpPort}/readyz`);
      expect(readyz.status).toBe(200);
      // Its API takes only signed identities, on its port as in its own process.
      const unsigned = await fetch(`http://127.0.0.1:${billing.httpPort}/v1/billing/balance`);
      expect(unsigned.status).toBe(401);
    } finally {
      await billing.stop();
    }
    expect((await billing.health.report()).ready).toBe(false);
    await expect(fetch(`http://127.0.0.1:${billing.httpPort}/readyz`)).rejects.toThrow();
    // A stop asked for is not a crash.
    expect(exits).toEqual([]);
  });

  test('a worker that cannot start rejects with its reason, and that is not taken for a crash', async () => {
    const exits: number[] = [];
    const err = await startWorkerService(BILLING_WORKER, 'billing', data({ USAGE_BATCH_MAX: '0' }), (code) => exits.push(code)).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^Invalid configuration: USAGE_BATCH_MAX/);
    expect((err as Error).stack).toMatch(/^Error: Invalid configuration: USAGE_BATCH_MAX/);
    expect(exits).toEqual([]);
  });
});

describe('workerExecArgv', () => {
  test.each([
    { parent: ['--import', 'tsx'], worker: ['--import', 'tsx'] },
    { parent: ['--expose-gc', '--import', 'file:///x/tsx/loader.mjs'], worker: ['--import', 'file:///x/tsx/loader.mjs'] },
    { parent: ['--require', '/x/preflight.cjs', '--max-old-space-size=512', '--import=tsx'], worker: ['--require', '/x/preflight.cjs', '--import=tsx'] },
    { parent: ['--cpu-prof', '--cpu-prof-dir', '/tmp/p', '--expose-gc'], worker: ['--cpu-prof', '--cpu-prof-dir', '/tmp/p'] },
    { parent: ['--enable-source-maps', '--title', 'gateway'], worker: ['--enable-source-maps'] },
  ])('passes on only the per-thread flags of $parent', ({ parent, worker }) => {
    expect(workerExecArgv(parent)).toEqual(worker);
  });
});
