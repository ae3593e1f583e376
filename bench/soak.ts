/**
 * Soak: N billed chat completions through the single-process gateway (`startLocalStack`, embedded engines)
 * against the OpenAI-format simulator, printing the gateway's RSS and heap every 100,000 calls (every 10% of
 * shorter runs) and the data size on disk; then waits until billing has charged every call, stops the
 * gateway, starts a new one on the same data and reports how long that start took. Memory is sampled after
 * a full garbage collection (the gateway runs with --expose-gc). Figures, machine, load
 * average and commit go to bench/results/soak-<date>.json. Not part of CI.
 *
 *   node --import tsx bench/soak.ts                   # 1,000,000 calls (long)
 *   node --import tsx bench/soak.ts --calls 100000    # shorter
 *   node --import tsx bench/soak.ts --calls 300000 --gateway-node-flags=--trace-gc --memory-trace /tmp/mem.jsonl
 *   node --import tsx bench/soak.ts --calls 100000 --allocation-profile /tmp/a.heapprofile --allocation-window 55-70
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { ROOT } from './lib/children';
import { compiledGateway } from './lib/build';
import { servicePorts } from './lib/soak-stacks';
import { writeResultFile } from './lib/results';
import { simulatorArgs } from './lib/run-setup';
import { freePorts, HOST, sleep } from './lib/net';
import { PRICE, PUBLIC_MODEL, gitRevision, writeCatalog } from './lib/setup';

const SIMULATOR_KEY = `sim-soak-${randomBytes(8).toString('hex')}`;
const BILLING_WAIT_MS = 10 * 60_000;

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000000' },
    connections: { type: 'string', default: '16' },
    out: { type: 'string', default: path.join(ROOT, 'bench', 'results') },
    'no-save': { type: 'boolean', default: false },
    // Diagnosis: extra node flags for the gateway (e.g. "--trace-gc"); a file that gets the gateway's memory
    // (no collection forced) every second as JSON lines, to time a jump in RSS; and a sampled allocation profile
    // (.heapprofile, garbage included) of a window of seconds after the gateway started, to name what allocates then.
    'gateway-node-flags': { type: 'string', default: '' },
    'memory-trace': { type: 'string' },
    'allocation-profile': { type: 'string' },
    'allocation-window': { type: 'string', default: '55-70' },
  },
});
const CALLS = Number(args.calls);
const CONNECTIONS = Number(args.connections);
if (!Number.isInteger(CALLS) || CALLS < 10) throw new Error(`--calls must be an integer >= 10, got "${args.calls}"`);
if (!Number.isInteger(CONNECTIONS) || CONNECTIONS < 1 || CONNECTIONS > 256) throw new Error(`--connections must be in [1, 256]`);
const STEP = CALLS >= 1_000_000 ? 100_000 : Math.ceil(CALLS / 10);

const children = new Set<ChildProcess>();
const tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-soak-'));
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(tempDir, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(130));

/** A node child of this soak (killed with it), with an IPC channel: `args` are node's, script and its arguments included. */
function spawnChild(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

interface Gateway {
  child: ChildProcess;
  edgePort: number;
  /** Inside the process: how long `startLocalStack` took on the data present. */
  startupMs: number;
  /** From spawn (node's own start-up and module loading included) until the stack answered. */
  spawnToReadyMs: number;
}

async function startGateway(env: NodeJS.ProcessEnv): Promise<Gateway> {
  // Every service's port free, not only the ones the soak calls: a default port (batch's 8084) still held by the
  // previous gateway stopped a soak started right after another.
  const [ports, entry] = await Promise.all([servicePorts(), compiledGateway(ROOT, tempDir, 'bench/soak-gateway.ts')]);
  const t0 = performance.now();
  // Compiled, as scripts/start.sh runs it. --expose-gc: memory is sampled after a full collection, so it shows what
  // is live, not garbage not yet collected. The soak-gateway stops itself when this process goes away.
  const child = spawnChild(['--expose-gc', ...args['gateway-node-flags'].split(/\s+/).filter(Boolean), entry], {
    ...env,
    ...ports,
    ...(args['memory-trace'] ? { SOAK_MEMORY_TRACE: path.resolve(args['memory-trace']) } : {}),
    ...(args['allocation-profile'] ? { SOAK_ALLOCATION_PROFILE: path.resolve(args['allocation-profile']), SOAK_ALLOCATION_WINDOW: args['allocation-window'] } : {}),
  });
  const ready = await new Promise<{ edgePort: number; startupMs: number }>((resolve, reject) => {
    child.on('message', (m: { type?: string; edgePort: number; startupMs: number }) => m.type === 'ready' && resolve(m));
    child.once('exit', (code) => reject(new Error(`gateway exited (code ${code}) before it was ready`)));
  });
  return { child, edgePort: ready.edgePort, startupMs: ready.startupMs, spawnToReadyMs: performance.now() - t0 };
}

/** The gateway process's memory, and each of its threads' heap (the main thread's and billing's worker). */
interface GatewayMemory {
  rss: number;
  external: number;
  heaps: Record<string, { used: number; total: number }>;
}

function memoryOf(child: ChildProcess): Promise<GatewayMemory> {
  return new Promise((resolve) => {
    const onMessage = (m: { type?: string; memory: GatewayMemory }) => {
      if (m.type !== 'memory') return;
      child.off('message', onMessage);
      resolve(m.memory);
    };
    child.on('message', onMessage);
    child.send({ type: 'memory' });
  });
}

/** Heap in use and held, summed over the threads. */
const heapSum = (m: GatewayMemory) => Object.values(m.heaps).reduce((a, h) => ({ used: a.used + h.used, total: a.total + h.total }), { used: 0, total: 0 });

function diskBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, e) => {
    const p = path.join(dir, e.name);
    return sum + (e.isDirectory() ? diskBytes(p) : statSync(p).size);
  }, 0);
}

const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
async function main(): Promise<void> {
  const loadBefore = os.loadavg();
  const startedAt = new Date();
  const git = gitRevision();
  const [simPort] = await freePorts(1);
  const dataDir = path.join(tempDir, 'data');
  mkdirSync(dataDir);
  const key = `sk-gw-v1-${randomBytes(24).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', NODE_ENV: 'production', DATA_DIR: dataDir,
    SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_soak', credit_usd: '1000000', management_key: key }]),
    CATALOG_FILE: writeCatalog(tempDir, simPort), SIMULATOR_API_KEY: SIMULATOR_KEY,
  };
  const simulator = spawnChild(simulatorArgs(simPort), env);
  let gw = await startGateway(env);
  const base = `http://${HOST}:${gw.edgePort}`;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ model: PUBLIC_MODEL, messages: [{ role: 'user', content: 'How does a soak test find a leak?' }], max_completion_tokens: 32 });
  const balance = async (): Promise<number> => {
    const res = await request(`${base}/v1/billing/balance`, { headers: auth });
    const json = (await res.body.json()) as { data?: { spendable?: string } };
    if (typeof json.data?.spendable !== 'string') throw new Error(`balance: HTTP ${res.statusCode}`);
    return usdToMicros(json.data.spendable);
  };

  const balanceStart = await balance();
  // The simulator may need a moment; the first answered call also gives the price of one call.
  let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  for (let i = 0; !usage; i++) {
    const res = await request(`${base}/v1/chat/completions`, { method: 'POST', headers: auth, body }).catch(() => null);
    const json = res ? ((await res.body.json()) as { usage?: typeof usage }) : null;
    usage = res?.statusCode === 200 ? json?.usage : undefined;
    if (!usage && i > 50) throw new Error('the gateway did not answer a chat call');
    if (!usage) await sleep(200);
  }
  const perCall = listCostMicros(deploymentPrice(PRICE), tokenCounts(usage));

  const checkpoints: Array<{ calls: number; rss_mb: number; heap_used_mb: number; heap_total_mb: number; heap_used_mb_by_thread: Record<string, number>; external_mb: number; data_mb: number; calls_per_s: number }> = [];
  const pool = new Pool(base, { connections: CONNECTIONS, pipelining: 1 });
  let sent = 0;
  let done = 0;
  let failed = 0;
  let segmentStart = performance.now();
  let sampling = Promise.resolve();
  const sample = (calls: number) => {
    const elapsed = (performance.now() - segmentStart) / 1000;
    segmentStart = performance.now();
    sampling = sampling.then(async () => {
      const m = await memoryOf(gw.child);
      const heap = heapSum(m);
      const byThread = Object.fromEntries(Object.entries(m.heaps).map(([thread, h]) => [thread, mb(h.used)]));
      const row = {
        calls, rss_mb: mb(m.rss), heap_used_mb: mb(heap.used), heap_total_mb: mb(heap.total), heap_used_mb_by_thread: byThread,
        external_mb: mb(m.external), data_mb: mb(diskBytes(dataDir)), calls_per_s: Math.round(STEP / elapsed),
      };
      checkpoints.push(row);
      const threads = Object.entries(byThread).map(([thread, used]) => `${thread} ${used}`).join(', ');
      process.stdout.write(`${String(calls).padStart(9)} calls  rss ${row.rss_mb} MB  heap ${row.heap_used_mb}/${row.heap_total_mb} MB (${threads})  external ${row.external_mb} MB  data ${row.data_mb} MB  ${row.calls_per_s} calls/s\n`);
    });
  };
  const worker = async () => {
    while (sent < CALLS) {
      sent++;
      const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: auth, body });
      await res.body.dump();
      if (res.statusCode !== 200) failed++;
      done++;
      if (done % STEP === 0 || done === CALLS) sample(done);
    }
  };
  process.stdout.write(`soak: ${CALLS} calls, ${CONNECTIONS} connections, memory every ${STEP} calls (data in ${dataDir})\n`);
  const loadStarted = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  await sampling;
  await pool.close();

  // Every answered call billed once: the balance falls by exactly the calls' price, then stays.
  const expected = (CALLS + 1 - failed) * perCall;
  const deadline = Date.now() + BILLING_WAIT_MS;
  let billed = balanceStart - (await balance());
  while (billed < expected && Date.now() < deadline) {
    await sleep(1000);
    billed = balanceStart - (await balance());
  }
  const billingCaughtUpS = (Date.now() - (deadline - BILLING_WAIT_MS)) / 1000;
  const afterBilling = await memoryOf(gw.child);
  process.stdout.write(`billing: ${billed / perCall} of ${CALLS + 1 - failed} answered calls charged (${billingCaughtUpS.toFixed(1)} s after the last call); rss ${mb(afterBilling.rss)} MB\n`);
  await stop(gw.child);
  const dataBytes = diskBytes(dataDir);

  // A new stack on the data the soak left behind.
  gw = await startGateway(env);
  const restartMemory = await memoryOf(gw.child);
  const res = await request(`http://${HOST}:${gw.edgePort}/v1/chat/completions`, { method: 'POST', headers: auth, body });
  await res.body.dump();
  process.stdout.write(`data on disk ${mb(dataBytes)} MB; a new stack on it started in ${Math.round(gw.startupMs)} ms (${Math.round(gw.spawnToReadyMs)} ms from spawn), rss ${mb(restartMemory.rss)} MB, first call HTTP ${res.statusCode}\n`);
  await stop(gw.child);
  await stop(simulator);

  const result = {
    benchmark: 'soak',
    date: startedAt.toISOString(),
    git,
    command: `node --import tsx bench/soak.ts --calls ${CALLS} --connections ${CONNECTIONS}`,
    gateway: 'compiled (deploy/docker/build-service.sh gateway), bench/soak-gateway.ts',
    machine: {
      nproc: os.cpus().length, cpu: os.cpus()[0]?.model ?? null, mem_total_gib: Math.round(os.totalmem() / 2 ** 30 * 10) / 10,
      node: process.version, platform: `${os.platform()} ${os.release()}`, loadavg_before: loadBefore, loadavg_after: os.loadavg(),
    },
    calls: CALLS, connections: CONNECTIONS, failed_calls: failed, load_seconds: Math.round(loadSeconds), calls_per_s: Math.round(CALLS / loadSeconds),
    checkpoints,
    billing: { per_call_micros: perCall, expected_calls: CALLS + 1 - failed, billed_calls: billed / perCall, ok: billed === expected, caught_up_s: Math.round(billingCaughtUpS) },
    after_billing: { rss_mb: mb(afterBilling.rss), heap_used_mb: mb(heapSum(afterBilling).used) },
    data_mb: mb(dataBytes),
    restart: { startup_ms: Math.round(gw.startupMs), spawn_to_ready_ms: Math.round(gw.spawnToReadyMs), rss_mb: mb(restartMemory.rss), first_call_status: res.statusCode },
  };
  if (!args['no-save']) {
    const file = writeResultFile(args.out, `soak-${startedAt.toISOString().slice(0, 10)}-${CALLS}`, result);
    process.stdout.write(`wrote ${path.relative(ROOT, file)}\n`);
  }
  if (failed > 0 || !result.billing.ok) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`soak failed: ${(err as Error)?.stack ?? err}\n`);
  process.exit(1);
});
