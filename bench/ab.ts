/**
 * Is a change faster? Runs the gateway of a base commit and the gateway of this working tree side by side against
 * one simulator, and alternates the same chat load (non-streaming, or streaming with `--stream`) between them in
 * short slices (ABBA). Back-to-back full benchmarks on this VM differ by up to half as its speed drifts within
 * minutes; slices a few seconds apart see the same VM.
 *
 * A gateway process also has a speed of its own (where its threads run, what the JIT made of its code): two
 * processes of the same code differed by 5-9% for a whole run. So both are started afresh `--restarts` times,
 * and the interval of the ratio is taken over those process pairs, not over the slices of one pair of processes.
 *
 * Each slice records the rate, the p50, and the gateway process's CPU time per answered call, counted from the
 * slice's start until its background work (usage, billing, archive) has drained. Every answered call is checked
 * as billed once.
 *
 *   node --import tsx bench/ab.ts --base HEAD                 # the working tree's edits against the last commit
 *   node --import tsx bench/ab.ts --base 2ab438a --connections 64 --restarts 6
 *   node --import tsx bench/ab.ts --base HEAD --candidate-env SOME_SETTING=1   # one setting, same code
 *   node --import tsx bench/ab.ts --base HEAD --stream                            # streams: TTFT and CPU per stream
 *
 * The base runs from a git worktree under `.cache/ab/<commit>` (made on first use, dependencies installed
 * offline from pnpm's store). Both sides run compiled, each built by this checkout's build script
 * (`lib/gateway.ts`). Only loopback addresses; everything started here is stopped on exit.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { ROOT, cleanup, forgetChild, installExitHandlers, runBenchmark, stopChild } from './lib/children';
import { prepareRun, startSimulator } from './lib/run-setup';
import { pooled, ratioSummary, type Pooled, type RatioSummary, type Slice } from './lib/ab-stats';
import { startBenchGateway, type BenchGateway } from './lib/gateway';
import { HOST, getStatus, postJson, waitFor } from './lib/net';
import { envOption, intOption } from './lib/options';
import { cpuTicks, mainThreadTicks, microsPerCall, percentile, round, settle, threadTicksByName, threadTicksDelta } from './lib/stats';
import { balanceReader, checkBilling, settledBalance, type BillingCheck } from './lib/billing';
import { fmt, formatTable } from './lib/report';
import { writeResultFile } from './lib/results';
import { PUBLIC_MODEL, chatBody, gitRevision } from './lib/setup';
import { oneStream, streamLoad, type StreamSegment, type StreamTarget } from './lib/stream-load';
import { unaryLoad, type Segment, type UnaryTarget } from './lib/unary-load';

const SIMULATOR_KEY = `sim-ab-${randomBytes(8).toString('hex')}`;
const HELP = `Usage: node --import tsx bench/ab.ts --base REF [options]
  --base REF             the commit to compare against (default HEAD); the candidate is this working tree
  --connections 8,64     connection counts (comma-separated)
  --restarts 4           process pairs: both gateways are started afresh this many times
  --pairs 3              slice pairs per connection count on each process pair (ABBA order)
  --slice 5              seconds of load per slice
  --warmup 3             seconds of warm-up per gateway (at the largest connection count)
  --stream               streaming chat instead (rate in streams/s, p50 of the time to first token)
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
  restarts: number;
  pairs: number;
  sliceS: number;
  warmupS: number;
  stream: boolean;
  env: Record<Side, Record<string, string>>;
  outDir: string;
  save: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      base: { type: 'string', default: 'HEAD' },
      connections: { type: 'string', default: '8,64' },
      restarts: { type: 'string', default: '4' },
      pairs: { type: 'string', default: '3' },
      slice: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '3' },
      stream: { type: 'boolean', default: false },
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
  return {
    base: values.base,
    connections: values.connections.split(',').map((c) => intOption(c.trim(), '--connections', 1, 1024)),
    restarts: intOption(values.restarts, '--restarts', 1, 20),
    pairs: intOption(values.pairs, '--pairs', 1, 50),
    sliceS: intOption(values.slice, '--slice', 1, 120),
    warmupS: intOption(values.warmup, '--warmup', 0, 120),
    stream: values.stream,
    env: { base: envOption(values['base-env'], '--base-env'), candidate: envOption(values['candidate-env'], '--candidate-env') },
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

/** A slice's load, unary or streaming, in the terms the comparison uses. */
interface SliceLoad {
  durationS: number;
  answered: number;
  failed: number;
  /** Calls that may be billed without counting as answered. */
  unanswered: number;
  statusCodes: Record<string, number>;
  /** Response times (unary) or times to first token (streams), ms. */
  latencies: number[];
}

/** autocannon stops a run with up to one request per connection in flight: served and billed, never seen answered. */
const fromUnary = (s: Segment, connections: number): SliceLoad => ({
  durationS: s.durationS, answered: s.completed2xx, failed: s.non2xx + s.errors, unanswered: connections, statusCodes: s.statusCodes, latencies: s.latencies,
});
/** Every stream loop finishes what it started; a failed stream may still have been billed. */
const fromStreams = (s: StreamSegment): SliceLoad => ({
  durationS: s.durationS, answered: s.completed, failed: s.failed, unanswered: s.failed, statusCodes: s.statusCodes, latencies: s.ttftMs,
});

interface Comparison {
  connections: number;
  base: Pooled;
  candidate: Pooled;
  rps_ratio: RatioSummary;
  cpu_ratio: RatioSummary;
  slices: Record<Side, Slice[]>;
}

async function main(): Promise<number> {
  installExitHandlers();
  const opts = parseOptions();
  const maxConn = Math.max(...opts.connections);
  const base = baseTree(opts.base);
  const perGenerationS = 120 + 2 * (opts.warmupS + 20) + opts.connections.length * opts.pairs * 2 * (opts.sliceS + 40);
  const budgetS = 120 + opts.restarts * perGenerationS;
  const run = await prepareRun('A/B run', budgetS);
  const { tempDir, benchKey, baseEnv, catalogFile } = run;
  const gwAuth = { authorization: `Bearer ${benchKey}` };
  const json = { 'content-type': 'application/json' };

  process.stdout.write(`base ${base.commit.slice(0, 7)}, candidate ${gitRevision()}; starting the simulator (:${run.simPort})...\n`);
  const simulator = startSimulator(run);
  await waitFor('the simulator', async () => (await getStatus(`http://${HOST}:${run.simPort}/v1/models`, { authorization: `Bearer ${SIMULATOR_KEY}` })) === 200, 120_000, [simulator]);

  const warnings: string[] = [];
  const warn = (w: string) => {
    warnings.push(w);
    process.stdout.write(w + '\n');
  };
  const slices = new Map(opts.connections.map((c) => [c, { base: [], candidate: [] } as Record<Side, Slice[]>]));
  const billing: Array<Record<Side, BillingCheck>> = [];

  /** Both gateways started afresh (the first one alternating), their slices, their billing check, both stopped. */
  const generation = async (g: number): Promise<void> => {
    const gateways = {} as Record<Side, BenchGateway>;
    for (const side of g % 2 === 1 ? SIDES : [...SIDES].reverse()) {
      gateways[side] = await startBenchGateway({
        name: `${side} gateway`, root: side === 'base' ? base.dir : ROOT, tempDir, dataPrefix: `data-${side}-${g}`, baseEnv, benchKey, catalogFile,
        simulatorKey: SIMULATOR_KEY, extraEnv: opts.env[side], watch: [simulator],
      });
    }
    const pid = (side: Side) => gateways[side].child.proc.pid;
    const origin = (side: Side) => `http://${HOST}:${gateways[side].edgePort}`;
    const target = (side: Side): UnaryTarget => ({ path: side, url: `${origin(side)}/v1/chat/completions`, headers: { ...gwAuth, ...json }, body: chatBody(PUBLIC_MODEL) });
    const streamTarget = (side: Side): StreamTarget => ({
      path: side, origin: origin(side), pathname: '/v1/chat/completions', headers: { ...gwAuth, ...json }, body: chatBody(PUBLIC_MODEL, true),
    });
    const readBalance = (side: Side) => balanceReader(origin(side), gwAuth);

    // One call each: both answer, and what a call costs (the balance's fall once it has landed).
    const perCallMicros = {} as Record<Side, number>;
    const balanceStart = {} as Record<Side, number>;
    const answered: Record<Side, number> = { base: 0, candidate: 0 };
    /** Calls that may be billed without being counted as answered: a unary run's requests cut off at its end, failed streams. */
    const unanswered: Record<Side, number> = { base: 0, candidate: 0 };
    for (const side of SIDES) {
      balanceStart[side] = await readBalance(side)();
      if (opts.stream) {
        const r = await oneStream(streamTarget(side));
        if ('failed' in r) throw new Error(`${side} stream probe failed: HTTP ${r.status}`);
      } else {
        const t = target(side);
        const r = await postJson(t.url, t.headers, t.body);
        if (r.status !== 200 || !(r.json?.usage?.prompt_tokens > 0)) throw new Error(`${side} probe failed: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
      }
      perCallMicros[side] = balanceStart[side] - (await settledBalance(readBalance(side), balanceStart[side], 1));
      if (perCallMicros[side] <= 0) throw new Error(`${side}: the probe was not billed (the balance did not fall)`);
      answered[side]++;
    }

    const runSlice = async (side: Side, connections: number, seconds: number, pair: number): Promise<Slice> => {
      for (const s of SIDES) await settle(pid(s));
      const [ticks0, main0, threads0] = [cpuTicks(pid(side)), mainThreadTicks(pid(side)), threadTicksByName(pid(side))];
      const s = opts.stream ? fromStreams(await streamLoad(streamTarget(side), connections, seconds, {})) : fromUnary(await unaryLoad(target(side), connections, seconds, {}), connections);
      await settle(pid(side));
      const [ticks1, main1] = [cpuTicks(pid(side)), mainThreadTicks(pid(side))];
      const billingTicks = threadTicksDelta(threads0, threadTicksByName(pid(side)))?.billing;
      const perCall = (a: number | null, b: number | null) => microsPerCall(a !== null && b !== null ? b - a : null, s.answered, 1);
      answered[side] += s.answered;
      unanswered[side] += s.unanswered;
      if (s.failed > 0) warn(`WARNING: ${side} x${connections}: ${s.failed} failed (${JSON.stringify(s.statusCodes)})`);
      const lat = Float64Array.from(s.latencies).sort();
      return {
        generation: g, pair, rps: Math.round(s.answered / s.durationS), p50_ms: round(percentile(lat, 50), 3), answered: s.answered, failed: s.failed,
        cpu_us_per_call: perCall(ticks0, ticks1), main_thread_us_per_call: perCall(main0, main1),
        billing_thread_us_per_call: microsPerCall(billingTicks, s.answered, 1),
      };
    };

    if (opts.warmupS > 0) for (const side of SIDES) await runSlice(side, maxConn, opts.warmupS, 0);
    for (const c of opts.connections) {
      for (let pair = 1; pair <= opts.pairs; pair++) {
        const line: string[] = [];
        for (const side of pair % 2 === 1 ? SIDES : [...SIDES].reverse()) {
          const s = await runSlice(side, c, opts.sliceS, pair);
          slices.get(c)![side].push(s);
          line.push(`${side} ${s.rps}/s ${fmt(s.cpu_us_per_call)} us/call`);
        }
        process.stdout.write(`generation ${g}/${opts.restarts}, x${c} pair ${pair}/${opts.pairs}: ${line.join(', ')}\n`);
      }
    }

    const checks = {} as Record<Side, BillingCheck>;
    for (const side of SIDES) {
      const end = await settledBalance(readBalance(side), balanceStart[side], answered[side] * perCallMicros[side]);
      checks[side] = checkBilling(balanceStart[side], end, perCallMicros[side], answered[side], unanswered[side]);
      if (!checks[side].ok) warn(`WARNING: ${side} (generation ${g}): billed ${checks[side].calls_billed} calls, expected ${answered[side]} to ${answered[side] + unanswered[side]}`);
    }
    billing.push(checks);
    for (const side of SIDES) {
      await stopChild(gateways[side].child, 15_000);
      forgetChild(gateways[side].child);
    }
  };
  for (let g = 1; g <= opts.restarts; g++) await generation(g);
  const loadAfter = os.loadavg();

  const comparisons: Comparison[] = opts.connections.map((c) => {
    const sl = slices.get(c)!;
    return {
      connections: c, base: pooled(sl.base), candidate: pooled(sl.candidate),
      rps_ratio: ratioSummary(sl.base, sl.candidate, (s) => s.rps, false),
      cpu_ratio: ratioSummary(sl.base, sl.candidate, (s) => s.cpu_us_per_call, true),
      slices: sl,
    };
  });
  const billedOk = (side: Side) => billing.every((b) => b[side].ok);
  const total = (side: Side, f: (b: BillingCheck) => number | null) => billing.reduce((n, b) => n + (f(b[side]) ?? 0), 0);
  const lines = ['', `${opts.stream ? 'streaming chat: ' : ''}candidate (${gitRevision()}) against base (${base.commit.slice(0, 7)}): ${opts.restarts} process pairs x ${opts.pairs} pairs of ${opts.sliceS} s slices per connection count`, ...formatTable(
    ['conns', 'side', opts.stream ? 'streams/s' : 'RPS', opts.stream ? 'TTFT p50 ms' : 'p50 ms', 'CPU us/call', 'main thread', 'billing thread', 'candidate/base (±2 SE)', 'single pairs', 'pairs won'],
    comparisons.flatMap((k) => [
      ...SIDES.map((side) => [String(k.connections), side, fmt(k[side].rps), fmt(k[side].p50_ms, 2), fmt(k[side].cpu_us_per_call), fmt(k[side].main_thread_us_per_call),
        fmt(k[side].billing_thread_us_per_call), '', '', '']),
      ...([[opts.stream ? '  streams/s' : '  RPS', k.rps_ratio], ['  CPU/call', k.cpu_ratio]] as const).map(([what, r]) =>
        ['', what, '', '', '', '', '', `${fmt(r.geomean, 3)} (${fmt(r.low, 3)}-${fmt(r.high, 3)})`, `${fmt(r.min, 3)}-${fmt(r.max, 3)}`, `${r.candidate_won}/${r.pairs}`]),
    ]),
  ), '',
  `billing: ${SIDES.map((s) => `${s} ${total(s, (b) => b.calls_billed)} calls billed for ${total(s, (b) => b.answered)} answered${billedOk(s) ? ' (once each)' : ''}`).join('; ')}`,
  `machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}; load average before ${run.loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
  ...warnings];
  process.stdout.write(lines.join('\n') + '\n');

  if (opts.save) {
    const file = writeResultFile(opts.outDir, `ab-${run.startedAt.toISOString().slice(0, 10)}`, {
      benchmark: 'ab',
      date: run.startedAt.toISOString(),
      base: base.commit,
      candidate: gitRevision(),
      command: `node --import tsx bench/ab.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine: {
        nproc: os.availableParallelism(), cpu: os.cpus()[0]?.model.trim() ?? null, mem_total_gib: round(os.totalmem() / 2 ** 30, 1), node: process.version,
        loadavg_before: run.loadBefore.map((l) => round(l, 2)), loadavg_after: loadAfter.map((l) => round(l, 2)),
      },
      config: {
        stream: opts.stream, connections: opts.connections, restarts: opts.restarts, pairs: opts.pairs, slice_s: opts.sliceS, warmup_s: opts.warmupS, env: opts.env,
        request_bytes: Buffer.byteLength(chatBody(PUBLIC_MODEL, opts.stream)),
      },
      comparisons,
      billing,
      warnings,
    });
    process.stdout.write(`wrote ${path.relative(process.cwd(), file) || file}\n`);
  }
  await cleanup();
  run.clearBudget();
  return warnings.length > 0 ? 1 : 0;
}

runBenchmark('A/B run', main);
