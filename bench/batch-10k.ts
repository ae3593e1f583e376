/**
 * A 10,000-line batch on the single-machine mode: the whole gateway in one process (`startLocalStack`,
 * embedded engines, compiled as scripts/start.sh runs it) and the OpenAI-format simulator in another. Uploads the JSONL file through the edge,
 * creates the batch (platform execution: every line through the inference gRPC API), polls it to `completed`
 * and reports the time, lines per second and the gateway's RSS (sampled every second, /proc), then checks
 * that the balance fell by exactly the batch's `usage_billing.charged_cost`. Writes
 * `bench/results/batch-10k-<date>.json`. A figure, not a test.
 *
 *   node --import tsx bench/batch-10k.ts [--lines 10000] [--concurrency 32]
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { usdToMicros } from '@gw/platform';
import { compiledGateway } from './lib/build';
import { cleanup, installExitHandlers, logTails, ROOT, setTempDir, startChild } from './lib/children';
import { writeResultFile } from './lib/results';
import { simulatorArgs } from './lib/run-setup';
import { freePorts, HOST, sleep, waitFor } from './lib/net';
import { rssMb } from './lib/proc';
import { servicePorts } from './lib/soak-stacks';
import { gitRevision, PUBLIC_MODEL, writeCatalog } from './lib/setup';

const { values: args } = parseArgs({ options: { lines: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '32' } } });
const LINES = Number(args.lines);
const CONCURRENCY = Number(args.concurrency);

async function main(): Promise<void> {
  installExitHandlers();
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-bench-'));
  setTempDir(tempDir);
  const dataDir = path.join(tempDir, 'data');
  mkdirSync(dataDir);
  const [[sim], ports, gatewayEntry] = await Promise.all([freePorts(1), servicePorts(), compiledGateway(ROOT, tempDir)]);
  const key = `sk-gw-v1-${randomBytes(24).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', NODE_ENV: 'production', DATA_DIR: dataDir, BENCH_TEMP_DIR: tempDir,
    SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_bench', credit_usd: '1000000', management_key: key }]),
    CATALOG_FILE: writeCatalog(tempDir, sim!), SIMULATOR_API_KEY: 'bench-simulator-key',
    ...ports,
    BATCH_LINE_CONCURRENCY: String(CONCURRENCY), BATCH_ACCOUNT_CONCURRENCY: String(CONCURRENCY), FILE_MAX_LINES: String(Math.max(LINES, 50_000)),
  };
  const simulator = startChild('simulator', simulatorArgs(sim!), env, true);
  const gateway = startChild('gateway', [gatewayEntry], env, true);
  const edge = ports.EDGE_PORT;
  const base = `http://${HOST}:${edge}/v1`;
  const auth = { authorization: `Bearer ${key}` };
  const getJson = async (p: string) => (await (await fetch(`${base}${p}`, { headers: auth })).json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  await waitFor('the gateway', async () => (await fetch(`${base}/models`)).ok, 60_000, [simulator, gateway]);
  const spendable = async () => usdToMicros((await getJson('/billing/balance')).data.spendable);

  const content = Array.from({ length: LINES }, (_, i) => JSON.stringify({
    custom_id: `line-${i}`, method: 'POST', url: '/v1/chat/completions',
    body: { model: PUBLIC_MODEL, messages: [{ role: 'user', content: `Batch line ${i}: say something short.` }], max_completion_tokens: 32 },
  })).join('\n');
  const balanceBefore = await spendable();
  const rssBefore = rssMb(gateway.proc.pid!);
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([content]), 'bench.jsonl');
  const t0 = performance.now();
  const file = (await (await fetch(`${base}/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
  const uploadedMs = performance.now() - t0;
  const createRes = await fetch(`${base}/batches`, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', execution: 'platform' }),
  });
  let batch = (await createRes.json()) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (createRes.status !== 200) throw new Error(`create: HTTP ${createRes.status} ${JSON.stringify(batch)}`);
  const createdMs = performance.now() - t0;
  let rssPeak = rssBefore ?? 0;
  while (!['completed', 'failed', 'cancelled', 'expired'].includes(batch.status)) {
    await sleep(1_000);
    batch = await getJson(`/batches/${batch.id}`);
    rssPeak = Math.max(rssPeak, rssMb(gateway.proc.pid!) ?? 0);
    process.stdout.write(`\r${batch.status} ${batch.request_counts.completed + batch.request_counts.failed}/${LINES} lines, RSS ${rssMb(gateway.proc.pid!)} MB   `);
  }
  const totalMs = performance.now() - t0;
  process.stdout.write('\n');
  const spent = balanceBefore - (await spendable());
  const result = {
    benchmark: 'batch-10k',
    date: new Date().toISOString(),
    commit: gitRevision(),
    machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model, memory_gb: Math.round(os.totalmem() / 1e8) / 10, node: process.version, loadavg_at_end: os.loadavg() },
    settings: { lines: LINES, line_concurrency: CONCURRENCY, mode: 'single process, embedded engines', execution: 'platform' },
    status: batch.status,
    request_counts: batch.request_counts,
    upload_ms: Math.round(uploadedMs),
    create_ms: Math.round(createdMs - uploadedMs),
    total_s: Math.round(totalMs / 100) / 10,
    lines_per_s: Math.round((LINES / (totalMs / 1000)) * 10) / 10,
    gateway_rss_mb: { before: rssBefore, peak: rssPeak, after: rssMb(gateway.proc.pid!) },
    billing: { usage_billing: batch.usage_billing, balance_change_micros: spent, matches: spent === batch.usage_billing?.charged_cost_micros },
  };
  const out = writeResultFile(path.join(ROOT, 'bench/results'), `batch-10k-${result.date.slice(0, 10)}`, result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\nwritten to ${path.relative(ROOT, out)}\n`);
}

main().then(() => cleanup(), async (err: unknown) => {
  process.stderr.write(`batch benchmark failed: ${(err as Error)?.stack ?? err}\n${logTails()}\n`);
  await cleanup();
  process.exit(1);
});
