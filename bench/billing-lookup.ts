/**
 * What a billing lookup (`GET /v1/billing/requests/{id}`) costs once the ledger holds many calls. Fills the
 * single-process gateway's ledger with `--calls` billed chat calls (64 connections), waits until billing has
 * caught up (and checks each answered call was billed once), then looks up, one after the other, a call by
 * its request id, by its provider id, an image call by its image's id, and an id no call has: latency and the
 * gateway's CPU per lookup each. The image call comes first, so the ledger holds media ids as a gateway that
 * serves images does.
 * `--root` runs another checkout's gateway (a worktree of an older commit) with this script, for a before/after.
 *
 *   node --import tsx bench/billing-lookup.ts [--calls 100000] [--lookups 300] [--root DIR] [--no-save]
 *
 * Writes bench/results/billing-lookup-<date>.json. A figure, not a test.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { ROOT, cleanup, installExitHandlers, runBenchmark } from './lib/children';
import { prepareRun, startSimulator } from './lib/run-setup';
import { startBenchGateway } from './lib/gateway';
import { unaryLoad } from './lib/unary-load';
import { writeResultFile } from './lib/results';
import { HOST, getStatus, waitFor } from './lib/net';
import { intOption } from './lib/options';
import { TICKS_PER_S, cpuTicks, percentile, round, settle } from './lib/stats';
import { balanceReader, checkBilling, settledBalance } from './lib/billing';
import { fmt, formatTable } from './lib/report';
import { IMAGE_MODEL, IMAGE_PRICE, PRICE, PUBLIC_MODEL, chatBody, gitRevision } from './lib/setup';

const SIMULATOR_KEY = `sim-lookup-${randomBytes(8).toString('hex')}`;
const FILL_CONNECTIONS = 64;
const FILL_SEGMENT_S = 15;

function options() {
  const { values } = parseArgs({
    options: {
      calls: { type: 'string', default: '100000' },
      lookups: { type: 'string', default: '300' },
      root: { type: 'string' },
      out: { type: 'string', default: path.join(ROOT, 'bench/results') },
      'no-save': { type: 'boolean', default: false },
    },
  });
  return {
    calls: intOption(values.calls, '--calls', 1, 10_000_000),
    lookups: intOption(values.lookups, '--lookups', 1, 100_000),
    root: values.root ? path.resolve(values.root) : ROOT,
    outDir: values.out,
    save: !values['no-save'],
  };
}

async function main(): Promise<number> {
  installExitHandlers();
  const opts = options();
  const run = await prepareRun('billing-lookup', 600 + Math.ceil(opts.calls / 500) + opts.lookups);
  const simulator = startSimulator(run);
  const gateway = await startBenchGateway({
    name: 'gateway', root: opts.root, tempDir: run.tempDir, baseEnv: run.baseEnv, benchKey: run.benchKey,
    catalogFile: run.catalogFile, simulatorKey: SIMULATOR_KEY, watch: [simulator],
  });
  await waitFor('the simulator', async () => (await getStatus(`http://${HOST}:${run.simPort}/v1/models`, { authorization: `Bearer ${SIMULATOR_KEY}` })) === 200, 120_000, [simulator]);
  const origin = `http://${HOST}:${gateway.edgePort}`;
  const auth = { authorization: `Bearer ${run.benchKey}` };
  const target = { path: 'gateway', url: `${origin}/v1/chat/completions`, headers: { ...auth, 'content-type': 'application/json' }, body: chatBody(PUBLIC_MODEL) };
  const pid = gateway.child.proc.pid;
  const readBalance = balanceReader(origin, auth);
  const balanceStart = await readBalance();

  // The call looked up: the first, so a lookup that reads the ledger in order finds it at once.
  const probe = await request(target.url, { method: 'POST', headers: target.headers, body: target.body });
  const probeJson = (await probe.body.json()) as { id?: string; usage?: Record<string, number> };
  const requestId = probe.headers['x-request-id'];
  if (probe.statusCode !== 200 || typeof requestId !== 'string' || !probeJson.id || !probeJson.usage) throw new Error(`probe call failed: HTTP ${probe.statusCode}`);
  const perCallMicros = listCostMicros(deploymentPrice(PRICE), tokenCounts(probeJson.usage as never));
  const image = await request(`${origin}/v1/images/generations`, { method: 'POST', headers: target.headers, body: JSON.stringify({ model: IMAGE_MODEL, prompt: 'a lookup benchmark' }) });
  const imageJson = (await image.body.json()) as { data?: { id?: string }[] };
  const imageId = imageJson.data?.[0]?.id;
  if (image.statusCode !== 200 || !imageId) throw new Error(`image call failed: HTTP ${image.statusCode}`);
  const imageMicros = usdToMicros(IMAGE_PRICE.per_image);
  let answered = 1;
  let inFlight = 0;
  const fillStarted = performance.now();
  while (answered < opts.calls) {
    const seconds = Math.min(FILL_SEGMENT_S, Math.max(2, Math.ceil((opts.calls - answered) / 1500)));
    const seg = await unaryLoad(target, FILL_CONNECTIONS, seconds, { gateway: pid });
    if (seg.non2xx > 0 || seg.errors > 0) throw new Error(`fill: ${seg.non2xx} non-2xx, ${seg.errors} errors`);
    answered += seg.completed2xx;
    inFlight += FILL_CONNECTIONS;
    process.stdout.write(`\rfilled ${answered} calls   `);
  }
  process.stdout.write(`\nfilled in ${round((performance.now() - fillStarted) / 1000, 1)} s; waiting for billing...\n`);
  const balanceEnd = await settledBalance(readBalance, balanceStart, answered * perCallMicros + imageMicros);
  const billing = checkBilling(balanceStart - imageMicros, balanceEnd, perCallMicros, answered, inFlight);
  if (!billing.ok) throw new Error(`billing: ${billing.calls_billed} calls billed for ${answered} answered (+ at most ${inFlight} in flight)`);
  await settle(pid);

  const kinds = [
    { kind: 'request id', id: requestId, status: 200 },
    { kind: 'provider id', id: probeJson.id, status: 200 },
    { kind: 'image id', id: imageId, status: 200 },
    { kind: 'unknown id', id: `no-such-call-${randomBytes(6).toString('hex')}`, status: 404 },
  ];
  const rows = [];
  for (const k of kinds) {
    const url = `${origin}/v1/billing/requests/${encodeURIComponent(k.id)}`;
    const ms = new Float64Array(opts.lookups);
    const ticks0 = cpuTicks(pid);
    for (let i = 0; i < opts.lookups; i++) {
      const t0 = performance.now();
      const res = await request(url, { headers: auth, headersTimeout: 60_000, bodyTimeout: 60_000 });
      await res.body.dump();
      ms[i] = performance.now() - t0;
      if (res.statusCode !== k.status) throw new Error(`lookup by ${k.kind}: HTTP ${res.statusCode}, expected ${k.status}`);
    }
    const cpuMs = (((cpuTicks(pid) ?? 0) - (ticks0 ?? 0)) / TICKS_PER_S) * 1000;
    ms.sort();
    rows.push({ kind: k.kind, status: k.status, p50_ms: round(percentile(ms, 50), 2), p99_ms: round(percentile(ms, 99), 2), max_ms: round(ms[ms.length - 1], 2), gateway_cpu_ms_per_lookup: round(cpuMs / opts.lookups, 2) });
  }

  const lines = ['', `${answered} chat calls and one image call in the ledger (billed once each); ${opts.lookups} lookups of each kind, one at a time`,
    ...formatTable(['lookup by', 'status', 'p50 ms', 'p99 ms', 'max ms', 'gateway CPU ms / lookup'],
      rows.map((r) => [r.kind, String(r.status), fmt(r.p50_ms, 2), fmt(r.p99_ms, 2), fmt(r.max_ms, 2), fmt(r.gateway_cpu_ms_per_lookup, 2)]), 1),
    `code: ${opts.root === ROOT ? 'this checkout' : opts.root} (${gitRevision(opts.root)})`,
    `machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}; load average before ${run.loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`];
  process.stdout.write(lines.join('\n') + '\n');

  if (opts.save) {
    const file = writeResultFile(opts.outDir, `billing-lookup-${run.startedAt.toISOString().slice(0, 10)}`, {
      benchmark: 'billing-lookup', date: run.startedAt.toISOString(), git: gitRevision(opts.root),
      command: `node --import tsx bench/billing-lookup.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine: { nproc: os.availableParallelism(), cpu: os.cpus()[0]?.model.trim() ?? null, node: process.version, loadavg_before: run.loadBefore.map((l) => round(l, 2)), loadavg_after: os.loadavg().map((l) => round(l, 2)) },
      config: { calls: answered, lookups: opts.lookups }, billing, results: rows,
    });
    process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
  }
  await cleanup();
  run.clearBudget();
  return 0;
}

runBenchmark('billing-lookup', main);
