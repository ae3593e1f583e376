/**
 * Would a second gateway process pay on this machine? The same non-streaming chat load, alternately (ABBA
 * across rounds): `one`, a single gateway stack at N connections; `two`, two independent stacks (each its
 * own process, data dir and engines, both on the one simulator) at N/2 connections each, at the same time.
 * Two stacks that share nothing are the upper bound of any "several gateway processes behind one port"
 * mode: a real one would add shared files (and their locks) or a balancer, never remove work.
 *
 *   node --import tsx bench/process-split.ts                   # 64 connections, 10 s, 3 rounds
 *   node --import tsx bench/process-split.ts --connections 8 --rounds 4
 *
 * Checks that every answered call was billed once on each stack, and writes bench/results/process-split-<date>.json.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { cleanup, installExitHandlers, runBenchmark } from './lib/children';
import { prepareRun, startSimulator } from './lib/run-setup';
import { startBenchGateway, type BenchGateway } from './lib/gateway';
import { unaryLoad, type Segment, type UnaryTarget } from './lib/unary-load';
import { writeResultFile } from './lib/results';
import { HOST, getStatus, postJson, waitFor } from './lib/net';
import { intOption, roundOptions, roundValues } from './lib/options';
import { TICKS_PER_S, round, settle } from './lib/stats';
import { balanceReader, checkBilling, settledBalance, type BillingCheck } from './lib/billing';
import { fmt, formatTable } from './lib/report';
import { PRICE, PUBLIC_MODEL, chatBody, gitRevision } from './lib/setup';

const SIMULATOR_KEY = `sim-split-${randomBytes(8).toString('hex')}`;

function options() {
  const { values } = parseArgs({
    options: {
      ...roundOptions('64'),
    },
  });
  const connections = intOption(values.connections, '--connections', 2, 1024);
  if (connections % 2 !== 0) throw new Error('--connections must be even (half goes to each stack)');
  return {
    connections,
    ...roundValues(values),
  };
}

/** Busy and total jiffies of the whole machine, from /proc/stat. */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const { readFileSync } = await import('node:fs');
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = cpu[3] + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

interface Side { gateway: BenchGateway; target: UnaryTarget; readBalance: () => Promise<number>; answered: number; inFlight: number }

async function main(): Promise<number> {
  installExitHandlers();
  const opts = options();
  const budgetS = 300 + (opts.warmupS + 20) * 2 + opts.rounds * 2 * (opts.durationS + 30);
  const run = await prepareRun('process-split', budgetS);
  const simulator = startSimulator(run);
  const start = (name: 'a' | 'b') => startBenchGateway({
    name: `gateway ${name}`, dataPrefix: name, tempDir: run.tempDir, baseEnv: run.baseEnv, benchKey: run.benchKey,
    catalogFile: run.catalogFile, simulatorKey: SIMULATOR_KEY, watch: [simulator],
  });
  // One after the other: two start-ups at once on two cores would only slow each other.
  const gateways = [await start('a'), await start('b')];
  await waitFor('the simulator', async () => (await getStatus(`http://${HOST}:${run.simPort}/v1/models`, { authorization: `Bearer ${SIMULATOR_KEY}` })) === 200, 120_000, [simulator]);
  const headers = { authorization: `Bearer ${run.benchKey}`, 'content-type': 'application/json' };
  const sides: Side[] = gateways.map((g, i) => ({
    gateway: g,
    target: { path: i === 0 ? 'a' : 'b', url: `http://${HOST}:${g.edgePort}/v1/chat/completions`, headers, body: chatBody(PUBLIC_MODEL) },
    readBalance: balanceReader(`http://${HOST}:${g.edgePort}`, { authorization: headers.authorization }),
    answered: 0,
    inFlight: 0,
  }));
  const pids = { a: gateways[0].child.proc.pid, b: gateways[1].child.proc.pid, simulator: simulator.proc.pid };
  const balanceStart = await Promise.all(sides.map((s) => s.readBalance()));
  let perCallMicros = 0;
  for (const s of sides) {
    const r = await postJson(s.target.url, s.target.headers, s.target.body);
    if (r.status !== 200 || !(r.json?.usage?.prompt_tokens > 0)) throw new Error(`${s.target.path} probe failed: HTTP ${r.status}`);
    perCallMicros = listCostMicros(deploymentPrice(PRICE), tokenCounts(r.json.usage));
    s.answered++;
  }
  const settleAll = async () => { await settle(pids.a); await settle(pids.b); };
  const loadOn = async (active: Side[], connections: number, seconds: number): Promise<Segment[]> => {
    const segs = await Promise.all(active.map((s) => unaryLoad(s.target, connections, seconds, pids)));
    segs.forEach((seg, i) => { active[i].answered += seg.completed2xx; active[i].inFlight += connections; });
    return segs;
  };
  if (opts.warmupS > 0) {
    process.stdout.write(`warm-up: both stacks, ${opts.connections / 2} connections each, ${opts.warmupS} s\n`);
    await settleAll();
    await loadOn(sides, opts.connections / 2, opts.warmupS);
  }

  type Mode = 'one' | 'two';
  const measured: Record<Mode, Array<{ rps: number; rps_by_stack: number[]; gateway_cpu_percent: number; machine_busy_percent: number; non_2xx: number; errors: number }>> = { one: [], two: [] };
  for (let r = 0; r < opts.rounds; r++) {
    for (const mode of (r % 2 === 0 ? ['one', 'two'] : ['two', 'one']) as Mode[]) {
      await settleAll();
      const active = mode === 'one' ? [sides[r % 2]] : sides;
      const perStack = mode === 'one' ? opts.connections : opts.connections / 2;
      process.stdout.write(`round ${r + 1}/${opts.rounds}: ${mode === 'one' ? `one stack x${perStack}` : `two stacks x${perStack} each`}, ${opts.durationS} s ... `);
      const m0 = await machineTicks();
      const segs = await loadOn(active, perStack, opts.durationS);
      const m1 = await machineTicks();
      const seconds = Math.max(...segs.map((s) => s.durationS));
      const rpsByStack = segs.map((s) => s.completed2xx / s.durationS);
      const gwTicks = segs[0].cpuTicks.a! + segs[0].cpuTicks.b!;
      const row = {
        rps: round(rpsByStack.reduce((a, b) => a + b, 0), 0)!,
        rps_by_stack: rpsByStack.map((v) => round(v, 0)!),
        gateway_cpu_percent: round((gwTicks / TICKS_PER_S / seconds) * 100, 0)!,
        machine_busy_percent: round(((m1.busy - m0.busy) / (m1.total - m0.total)) * 100, 0)!,
        non_2xx: segs.reduce((n, s) => n + s.non2xx, 0),
        errors: segs.reduce((n, s) => n + s.errors, 0),
      };
      measured[mode].push(row);
      process.stdout.write(`${row.rps} req/s (machine ${row.machine_busy_percent}% busy)\n`);
    }
  }

  const warnings: string[] = [];
  const billing: BillingCheck[] = [];
  for (const [i, s] of sides.entries()) {
    const end = await settledBalance(s.readBalance, balanceStart[i], s.answered * perCallMicros);
    const check = checkBilling(balanceStart[i], end, perCallMicros, s.answered, s.inFlight);
    billing.push(check);
    if (!check.ok) warnings.push(`WARNING: stack ${s.target.path}: billed ${check.calls_billed} calls for ${s.answered} answered (+ at most ${s.inFlight} in flight)`);
  }
  for (const mode of ['one', 'two'] as const) {
    for (const row of measured[mode]) if (row.non_2xx > 0 || row.errors > 0) warnings.push(`WARNING: ${mode}: ${row.non_2xx} non-2xx, ${row.errors} errors`);
  }

  const mean = (rows: { rps: number }[]) => rows.reduce((a, r) => a + r.rps, 0) / rows.length;
  const ratio = round(mean(measured.two) / mean(measured.one), 3);
  const lines = ['', ...formatTable(['mode', 'round', 'RPS', 'per stack', 'cpu% gateways', 'machine busy %'],
    (['one', 'two'] as const).flatMap((mode) => measured[mode].map((r, i) => [mode, String(i + 1), fmt(r.rps), r.rps_by_stack.join(' + '), fmt(r.gateway_cpu_percent), fmt(r.machine_busy_percent)])), 1),
  '', `two stacks / one stack, ${opts.connections} connections in all: ${fmt(ratio, 3)} (means of ${opts.rounds} rounds)`,
  `billing: ${billing.map((b, i) => `stack ${i === 0 ? 'a' : 'b'} ${b.calls_billed} calls billed for ${sides[i].answered} answered${b.ok ? ', once each' : ''}`).join('; ')}`,
  `machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}; load average before ${run.loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  ...warnings];
  process.stdout.write(lines.join('\n') + '\n');

  if (opts.save) {
    const file = writeResultFile(opts.outDir, `process-split-${run.startedAt.toISOString().slice(0, 10)}`, {
      benchmark: 'process-split', date: run.startedAt.toISOString(), git: gitRevision(),
      command: `node --import tsx bench/process-split.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine: { nproc: os.availableParallelism(), cpu: os.cpus()[0]?.model.trim() ?? null, node: process.version, loadavg_before: run.loadBefore.map((l) => round(l, 2)), loadavg_after: os.loadavg().map((l) => round(l, 2)) },
      config: { connections: opts.connections, duration_s: opts.durationS, warmup_s: opts.warmupS, rounds: opts.rounds },
      results: measured, two_over_one: ratio, billing, warnings,
    });
    process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
  }
  await cleanup();
  run.clearBudget();
  return warnings.length > 0 ? 1 : 0;
}

runBenchmark('process-split', main);
