/**
 * Is a change faster? Runs the gateway of a base commit and the gateway of this working tree side by side, both
 * alive for the whole run against one simulator, and alternates the same non-streaming chat load between them
 * in short slices (ABBA). Back-to-back full benchmarks on this VM differ by up to half as its speed drifts
 * within minutes; slices a few seconds apart see the same VM, so the pair ratios resolve a few percent.
 *
 * Each slice records the rate, the p50, and the gateway process's CPU time per answered call, counted from the
 * slice's start until its background work (usage, billing, archive) has drained: a cost per call that does not
 * depend on how the two cores were shared at that moment. Every answered call is checked as billed once.
 *
 *   node --import tsx bench/ab.ts --base HEAD                 # the working tree's edits against the last commit
 *   node --import tsx bench/ab.ts --base 2ab438a --connections 64 --pairs 8
 *   node --import tsx bench/ab.ts --base HEAD --candidate-env SOME_SETTING=1   # one setting, same code
 *
 * The base runs from a git worktree under `.cache/ab/<commit>` (made on first use, dependencies installed
 * offline from pnpm's store). Only loopback addresses; everything started here is stopped on exit.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';
import { ROOT, cleanup, installExitHandlers, logTails, setTempDir, startChild } from './lib/children';
import { startBenchGateway, type BenchGateway } from './lib/gateway';
import { HOST, freePorts, getStatus, postJson, waitFor } from './lib/net';
import { TICKS_PER_S, cpuTicks, mainThreadTicks, percentile, round, settle } from './lib/stats';
import { checkBilling, settledBalance, type BillingCheck } from './lib/billing';
import { fmt, formatTable } from './lib/report';
import { writeResultFile } from './lib/results';
import { PRICE, PUBLIC_MODEL, chatBody, gitRevision, writeCatalog } from './lib/setup';
import { unaryLoad, type UnaryTarget } from './lib/unary-load';

const SIMULATOR_KEY = `sim-ab-${randomBytes(8).toString('hex')}`;
const HELP = `Usage: node --import tsx bench/ab.ts --base REF [options]
  --base REF             the commit to compare against (default HEAD); the candidate is this working tree
  --connections 8,64     connection counts (comma-separated)
  --pairs 6              slice pairs per connection count (ABBA order)
  --slice 5              seconds of load per slice
  --warmup 3             seconds of warm-up per gateway (at the largest connection count)
  --base-env K=V         a variable for the base gateway only (repeatable)
  --candidate-env K=V    a variable for the candidate gateway only (repeatable)
  --out bench/results    directory for ab-<date>.json
  --no-save              print only
  --help`;

type Side = 'base' | 'candidate';
const SIDES: Side[] = ['base', 'candidate'];

interface Options {
  base: string;
  connections: number[];
  pairs: number;
  sliceS: number;
  warmupS: number;
  env: Record<Side, Record<string, string>>;
  outDir: string;
  save: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      base: { type: 'string', default: 'HEAD' },
      connections: { type: 'string', default: '8,64' },
      pairs: { type: 'string', default: '6' },
      slice: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '3' },
      'base-env': { type: 'string', multiple: true, default: [] },
      'candidate-env': { type: 'string', multiple: true, default: [] },
      out: { type: 'string', default: path.join(ROOT, 'bench', 'results') },
      'no-save': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP + '\n');
    process.exit(0);
  }
  const int = (v: string, flag: string, min: number, max: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} must be an integer in [${min}, ${max}], got "${v}"`);
    return n;
  };
  const envOf = (pairs: string[], flag: string) => {
    const env: Record<string, string> = {};
    for (const pair of pairs) {
      const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
      if (!m) throw new Error(`${flag} takes NAME=value, got "${pair}"`);
      env[m[1]] = m[2];
    }
    return env;
  };
  return {
    base: values.base,
    connections: values.connections.split(',').map((c) => int(c.trim(), '--connections', 1, 1024)),
    pairs: int(values.pairs, '--pairs', 1, 50),
    sliceS: int(values.slice, '--slice', 1, 120),
    warmupS: int(values.warmup, '--warmup', 0, 120),
    env: { base: envOf(values['base-env'], '--base-env'), candidate: envOf(values['candidate-env'], '--candidate-env') },
    outDir: path.resolve(values.out),
    save: !values['no-save'],
  };
}

/** A checkout of `ref` with its dependencies, kept under .cache/ab for the next run. */
function baseTree(ref: string): { dir: string; commit: string } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  const commit = git('rev-parse', '--verify', `${ref}^{commit}`);
  const dir = path.join(ROOT, '.cache', 'ab', commit);
  if (!existsSync(path.join(dir, 'node_modules'))) {
    process.stdout.write(`making the base tree ${path.relative(ROOT, dir)} (${ref})...\n`);
    if (!existsSync(dir)) git('worktree', 'add', '--detach', dir, commit);
    execFileSync('pnpm', ['install', '--offline', '--frozen-lockfile'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, CI: 'true' } });
  }
  return { dir, commit };
}

interface Slice {
  pair: number;
  rps: number;
  p50_ms: number | null;
  answered: number;
  failed: number;
  /** CPU of the gateway process per answered call, from the slice's start until its background work drained. */
  cpu_us_per_call: number | null;
  /** The part of it on the main thread (the edge, inference and the other services but billing). */
  main_thread_us_per_call: number | null;
}

/** Over a side's slices: mean rate, median p50, CPU per call weighted by the slices' calls. */
interface Pooled {
  rps: number | null;
  p50_ms: number | null;
  cpu_us_per_call: number | null;
  main_thread_us_per_call: number | null;
}

interface RatioSummary {
  geomean: number | null;
  /** geomean within two standard errors of the pairs' log ratios */
  low: number | null;
  high: number | null;
  min: number | null;
  max: number | null;
  candidate_won: number;
  pairs: number;
}

interface Comparison {
  connections: number;
  base: Pooled;
  candidate: Pooled;
  rps_ratio: RatioSummary;
  cpu_ratio: RatioSummary;
  slices: Record<Side, Slice[]>;
}

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Candidate / base within each pair, summarised on the log scale: the geometric mean, the interval of two
 * standard errors around it (about 95% when the pairs are independent), the range, and the pairs won.
 */
function ratioSummary(pairs: Array<[number | null, number | null]>, lowerWins: boolean): RatioSummary {
  const ratios = pairs.filter(([b, c]) => b !== null && c !== null && b > 0 && c > 0).map(([b, c]) => c! / b!);
  const logs = ratios.map(Math.log);
  const n = logs.length;
  const mean = n ? logs.reduce((a, b) => a + b, 0) / n : NaN;
  const se = n > 1 ? Math.sqrt(logs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1) / n) : NaN;
  return {
    geomean: round(Math.exp(mean), 3),
    low: round(Math.exp(mean - 2 * se), 3),
    high: round(Math.exp(mean + 2 * se), 3),
    min: round(Math.min(...ratios), 3),
    max: round(Math.max(...ratios), 3),
    candidate_won: ratios.filter((r) => (lowerWins ? r < 1 : r > 1)).length,
    pairs: n,
  };
}

async function main(): Promise<number> {
  installExitHandlers();
  const opts = parseOptions();
  const maxConn = Math.max(...opts.connections);
  const base = baseTree(opts.base);
  const budgetS = 300 + 2 * (opts.warmupS + 20) + opts.connections.length * opts.pairs * 2 * (opts.sliceS + 40);
  const budget = setTimeout(() => {
    process.stderr.write(`\nA/B run exceeded its time budget of ${budgetS} s; stopping everything\n${logTails()}\n`);
    cleanup().finally(() => process.exit(1));
  }, budgetS * 1000);

  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-bench-'));
  setTempDir(tempDir);
  const [simPort] = await freePorts(1);
  const benchKey = `sk-gw-v1-${randomBytes(24).toString('hex')}`;
  const baseEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', NODE_ENV: 'production' };
  const catalogFile = writeCatalog(tempDir, simPort);
  const gwAuth = { authorization: `Bearer ${benchKey}` };
  const json = { 'content-type': 'application/json' };

  process.stdout.write(`starting the simulator (:${simPort}), the base gateway (${base.commit.slice(0, 7)}) and the candidate (${gitRevision()})...\n`);
  const simulator = startChild('simulator', ['--import', 'tsx', '--import', path.join(ROOT, 'bench/exit-with-parent.ts'),
    path.join(ROOT, 'packages/simulators/src/main.ts'), '--port', String(simPort), '--host', HOST], baseEnv, true);
  const gateways = {} as Record<Side, BenchGateway>;
  for (const side of SIDES) {
    gateways[side] = await startBenchGateway({
      name: `${side} gateway`, root: side === 'base' ? base.dir : ROOT, tempDir, dataPrefix: `data-${side}`, baseEnv, benchKey, catalogFile,
      simulatorKey: SIMULATOR_KEY, extraEnv: opts.env[side], watch: [simulator],
    });
  }
  await waitFor('the simulator', async () => (await getStatus(`http://${HOST}:${simPort}/v1/models`, { authorization: `Bearer ${SIMULATOR_KEY}` })) === 200, 120_000, [simulator]);
  const pid = (side: Side) => gateways[side].child.proc.pid;
  const target = (side: Side): UnaryTarget => ({
    path: side, url: `http://${HOST}:${gateways[side].edgePort}/v1/chat/completions`, headers: { ...gwAuth, ...json }, body: chatBody(PUBLIC_MODEL),
  });
  const readBalance = (side: Side) => async (): Promise<number> => {
    const res = await request(`http://${HOST}:${gateways[side].edgePort}/v1/billing/balance`, { headers: gwAuth, headersTimeout: 5000, bodyTimeout: 5000 });
    const body = (await res.body.json()) as { data?: { spendable?: string } };
    if (res.statusCode !== 200 || typeof body.data?.spendable !== 'string') throw new Error(`${side} balance: HTTP ${res.statusCode} ${JSON.stringify(body)}`);
    return usdToMicros(body.data.spendable);
  };

  // One call each: both answer, and what a call costs.
  let perCallMicros = 0;
  const balanceStart = {} as Record<Side, number>;
  const answered: Record<Side, number> = { base: 0, candidate: 0 };
  const inFlight: Record<Side, number> = { base: 0, candidate: 0 };
  for (const side of SIDES) {
    balanceStart[side] = await readBalance(side)();
    const t = target(side);
    const r = await postJson(t.url, t.headers, t.body);
    if (r.status !== 200 || !(r.json?.usage?.prompt_tokens > 0)) throw new Error(`${side} probe failed: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
    perCallMicros = listCostMicros(deploymentPrice(PRICE), tokenCounts(r.json.usage));
    answered[side]++;
  }

  const warnings: string[] = [];
  const warn = (w: string) => {
    warnings.push(w);
    process.stdout.write(w + '\n');
  };
  const quiet = async () => {
    for (const side of SIDES) await settle(pid(side));
  };
  const runSlice = async (side: Side, connections: number, seconds: number, pair: number): Promise<Slice> => {
    await quiet();
    const [ticks0, main0] = [cpuTicks(pid(side)), mainThreadTicks(pid(side))];
    const s = await unaryLoad(target(side), connections, seconds, {});
    await settle(pid(side));
    const [ticks1, main1] = [cpuTicks(pid(side)), mainThreadTicks(pid(side))];
    const perCall = (a: number | null, b: number | null) => (a !== null && b !== null && s.completed2xx > 0 ? round(((b - a) / TICKS_PER_S / s.completed2xx) * 1e6, 1) : null);
    answered[side] += s.completed2xx;
    inFlight[side] += connections;
    if (s.non2xx > 0 || s.errors > 0) warn(`WARNING: ${side} x${connections}: ${s.non2xx} non-2xx (${JSON.stringify(s.statusCodes)}), ${s.errors} errors`);
    const lat = Float64Array.from(s.latencies).sort();
    return {
      pair,
      rps: Math.round(s.completed2xx / s.durationS),
      p50_ms: round(percentile(lat, 50), 3),
      answered: s.completed2xx,
      failed: s.non2xx + s.errors,
      cpu_us_per_call: perCall(ticks0, ticks1),
      main_thread_us_per_call: perCall(main0, main1),
    };
  };

  if (opts.warmupS > 0) {
    for (const side of SIDES) {
      process.stdout.write(`warm-up: ${side}, ${maxConn} connections, ${opts.warmupS} s\n`);
      await runSlice(side, maxConn, opts.warmupS, 0);
    }
  }

  const comparisons: Comparison[] = [];
  for (const c of opts.connections) {
    const slices: Record<Side, Slice[]> = { base: [], candidate: [] };
    for (let pair = 1; pair <= opts.pairs; pair++) {
      const order = pair % 2 === 1 ? SIDES : [...SIDES].reverse();
      const line: string[] = [];
      for (const side of order) {
        const s = await runSlice(side, c, opts.sliceS, pair);
        slices[side].push(s);
        line.push(`${side} ${s.rps}/s ${fmt(s.cpu_us_per_call)} us/call`);
      }
      process.stdout.write(`x${c} pair ${pair}/${opts.pairs}: ${line.join(', ')}\n`);
    }
    const pooled = (xs: Slice[]) => {
      const calls = xs.reduce((n, s) => n + s.answered, 0);
      const perCall = (f: (s: Slice) => number | null) => (xs.every((s) => f(s) !== null) ? round(xs.reduce((n, s) => n + f(s)! * s.answered, 0) / calls, 1) : null);
      return {
        rps: round(xs.reduce((n, s) => n + s.rps, 0) / xs.length, 0), p50_ms: round(median(xs.map((s) => s.p50_ms ?? NaN)) ?? NaN, 3),
        cpu_us_per_call: perCall((s) => s.cpu_us_per_call), main_thread_us_per_call: perCall((s) => s.main_thread_us_per_call),
      };
    };
    const paired = (f: (s: Slice) => number | null): Array<[number | null, number | null]> => slices.base.map((b, i) => [f(b), f(slices.candidate[i])]);
    comparisons.push({
      connections: c,
      base: pooled(slices.base),
      candidate: pooled(slices.candidate),
      rps_ratio: ratioSummary(paired((s) => s.rps), false),
      cpu_ratio: ratioSummary(paired((s) => s.cpu_us_per_call), true),
      slices,
    });
  }

  const billing = {} as Record<Side, BillingCheck>;
  for (const side of SIDES) {
    const end = await settledBalance(readBalance(side), balanceStart[side], answered[side] * perCallMicros);
    billing[side] = checkBilling(balanceStart[side], end, perCallMicros, answered[side], inFlight[side]);
    if (!billing[side].ok) warn(`WARNING: ${side}: billed ${billing[side].calls_billed} calls, expected ${answered[side]} to ${answered[side] + inFlight[side]}`);
  }
  const loadAfter = os.loadavg();

  const lines = ['', `candidate (${gitRevision()}) against base (${base.commit.slice(0, 7)}), ${opts.pairs} pairs of ${opts.sliceS} s slices per connection count`, ...formatTable(
    ['conns', 'side', 'RPS', 'p50 ms', 'CPU us/call', 'main thread', 'candidate/base (±2 SE)', 'range', 'pairs won'],
    comparisons.flatMap((k) => [
      ...SIDES.map((side) => [String(k.connections), side, fmt(k[side].rps), fmt(k[side].p50_ms, 2), fmt(k[side].cpu_us_per_call), fmt(k[side].main_thread_us_per_call), '', '', '']),
      ...([['  RPS', k.rps_ratio], ['  CPU/call', k.cpu_ratio]] as const).map(([what, r]) =>
        ['', what, '', '', '', '', `${fmt(r.geomean, 3)} (${fmt(r.low, 3)}-${fmt(r.high, 3)})`, `${fmt(r.min, 3)}-${fmt(r.max, 3)}`, `${r.candidate_won}/${r.pairs}`]),
    ]),
  ), '',
  `billing: ${SIDES.map((s) => `${s} ${billing[s].calls_billed} calls billed for ${answered[s]} answered${billing[s].ok ? ' (once each)' : ''}`).join('; ')}`,
  `machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
  ...warnings];
  process.stdout.write(lines.join('\n') + '\n');

  if (opts.save) {
    const file = writeResultFile(opts.outDir, `ab-${startedAt.toISOString().slice(0, 10)}`, {
      benchmark: 'ab',
      date: startedAt.toISOString(),
      base: base.commit,
      candidate: gitRevision(),
      command: `node --import tsx bench/ab.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine: {
        nproc: os.availableParallelism(), cpu: os.cpus()[0]?.model.trim() ?? null, mem_total_gib: round(os.totalmem() / 2 ** 30, 1), node: process.version,
        loadavg_before: loadBefore.map((l) => round(l, 2)), loadavg_after: loadAfter.map((l) => round(l, 2)),
      },
      config: { connections: opts.connections, pairs: opts.pairs, slice_s: opts.sliceS, warmup_s: opts.warmupS, env: opts.env, request_bytes: Buffer.byteLength(chatBody(PUBLIC_MODEL)) },
      comparisons,
      billing,
      warnings,
    });
    process.stdout.write(`wrote ${path.relative(process.cwd(), file) || file}\n`);
  }
  await cleanup();
  clearTimeout(budget);
  return warnings.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    process.stderr.write(`A/B run failed: ${(err as Error)?.stack ?? err}\n${logTails()}\n`);
    await cleanup();
    process.exit(1);
  },
);
