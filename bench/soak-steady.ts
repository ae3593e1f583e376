/**
 * Steady soak: chat calls at a fixed rate (open loop, a share of them streaming) for a fixed time through the
 * gateway in one of its two modes, sampling every 30 s the RSS and open file descriptors of every gateway
 * process (/proc) and the p50/p99 latency and errors of the calls of that window. At the end: the verdicts
 * (RSS flat within 10%, no fd growth, p99 steady; see lib/soak-verdicts.ts) with the samples, the machine,
 * the load average and the commit in bench/results/soak-steady-<date>-<mode>.json. Not part of CI.
 *
 *   node --import tsx bench/soak-steady.ts --mode embedded --duration 60m --rate 50
 *   source <engines env> && node --import tsx bench/soak-steady.ts --mode processes --duration 60m --rate 50
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { cleanup, installExitHandlers, logTails, ROOT, setTempDir, startChild } from './lib/children';
import { writeResultFile } from './lib/results';
import { simulatorArgs } from './lib/run-setup';
import { OpenLoopLoad, type LoadWindow } from './lib/open-loop';
import { fdCount, machine, rssMb } from './lib/proc';
import { cpuTicks, TICKS_PER_S } from './lib/stats';
import { freePorts, postJson, sleep, waitFor } from './lib/net';
import { chatBody, gitRevision, PUBLIC_MODEL, writeCatalog } from './lib/setup';
import { startSoakStack, type SoakMode } from './lib/soak-stacks';
import { verdicts, type Sample } from './lib/soak-verdicts';

const { values: args } = parseArgs({
  options: {
    mode: { type: 'string', default: 'embedded' },
    duration: { type: 'string', default: '60m' },
    rate: { type: 'string', default: '50' },
    'stream-share': { type: 'string', default: '0.3' },
    sample: { type: 'string', default: '30s' },
    connections: { type: 'string', default: '64' },
    'max-in-flight': { type: 'string', default: '2000' },
    note: { type: 'string', default: '' },
    out: { type: 'string', default: path.join(ROOT, 'bench', 'results') },
    'no-save': { type: 'boolean', default: false },
  },
});

/** "60m", "90s", "1h" or plain seconds. */
function seconds(text: string, name: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h)?$/.exec(text.trim());
  if (!m) throw new Error(`--${name} must look like 90s, 60m or 1h, got "${text}"`);
  return Number(m[1]) * ({ s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h']);
}

const MODE = args.mode as SoakMode;
if (MODE !== 'embedded' && MODE !== 'processes') throw new Error(`--mode must be embedded or processes, got "${args.mode}"`);
const DURATION_S = seconds(args.duration, 'duration');
const SAMPLE_S = seconds(args.sample, 'sample');
const RATE = Number(args.rate);
const STREAM_SHARE = Number(args['stream-share']);
const MAX_IN_FLIGHT = Number(args['max-in-flight']);
const CONNECTIONS = Number(args.connections);
if (!(RATE > 0 && RATE <= 5000)) throw new Error('--rate must be in (0, 5000] calls/s');
if (!(STREAM_SHARE >= 0 && STREAM_SHARE <= 1)) throw new Error('--stream-share must be in [0, 1]');
if (!(SAMPLE_S >= 1 && DURATION_S >= 4 * SAMPLE_S)) throw new Error('--duration must be at least four --sample periods');
if (!(Number.isInteger(MAX_IN_FLIGHT) && MAX_IN_FLIGHT >= 1)) throw new Error('--max-in-flight must be a positive integer');
if (!(Number.isInteger(CONNECTIONS) && CONNECTIONS >= 1 && CONNECTIONS <= 1024)) throw new Error('--connections must be in [1, 1024]');

const SIMULATOR_KEY = `sim-soak-${randomBytes(8).toString('hex')}`;
const CALL_TIMEOUT_MS = 30_000;
const say = (s: string) => process.stdout.write(`${s}\n`);

/**
 * The engines' processes (processes mode), sampled beside the gateway's for where the CPU went: the pid files
 * scripts/engines.sh writes, when this checkout's engines are the ones in use.
 */
function enginePids(): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const name of ['kafka', 'mongo']) {
    try {
      const pid = Number(readFileSync(path.join(ROOT, '.cache/engines/run', `${name}.pid`), 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && cpuTicks(pid) !== null) pids[`engine:${name}`] = pid;
    } catch {
      // not started by this checkout's engine script
    }
  }
  return pids;
}

/** CPU per process since the last call, in percent of one core. */
function cpuMeter(pids: Record<string, number>): () => Record<string, number | null> {
  let last = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuTicks(pid)]));
  let lastAt = performance.now();
  return () => {
    const now = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, cpuTicks(pid)]));
    const seconds = (performance.now() - lastAt) / 1000;
    const pct = Object.fromEntries(Object.entries(now).map(([n, t]) => {
      const before = last[n];
      return [n, t === null || before === null ? null : Math.round(((t - before) / TICKS_PER_S / seconds) * 1000) / 10];
    }));
    last = now;
    lastAt = performance.now();
    return pct;
  };
}

function sampleRow(tS: number, w: LoadWindow, pids: Record<string, number>, engines: Record<string, number>, cpu: Record<string, number | null>, loadConnections: number) {
  const rss = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, rssMb(pid)]));
  const fds = Object.fromEntries(Object.entries(pids).map(([n, pid]) => [n, fdCount(pid)]));
  const engineRss = Object.fromEntries(Object.entries(engines).map(([n, pid]) => [n, rssMb(pid)]));
  const sum = (r: Record<string, number | null>) => Math.round(Object.values(r).reduce<number>((s, v) => s + (v ?? 0), 0) * 10) / 10;
  return {
    t_s: Math.round(tS), loadavg_1m: Math.round(os.loadavg()[0] * 100) / 100, rss_sum_mb: sum(rss), rss_mb: rss, fds_sum: sum(fds), fds,
    cpu_percent: cpu, engines_rss_mb: engineRss, load_connections: loadConnections, ...w,
  };
}

async function main(): Promise<void> {
  installExitHandlers();
  const startedAt = new Date();
  const git = gitRevision();
  const loadavgStart = os.loadavg();
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-bench-soak-'));
  setTempDir(tempDir);
  const [simPort] = await freePorts(1);
  const key = `sk-gw-v1-${randomBytes(24).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', NODE_ENV: 'production',
    DATA_DIR: path.join(tempDir, 'data'), BENCH_TEMP_DIR: tempDir,
    MONGO_URL: process.env.MONGO_URL, KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_soak', credit_usd: '1000000', management_key: key }]),
    CATALOG_FILE: writeCatalog(tempDir, simPort), SIMULATOR_API_KEY: SIMULATOR_KEY,
  };
  startChild('simulator', simulatorArgs(simPort), env, true);
  const stack = await startSoakStack(MODE, env, tempDir);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  await waitFor('a first answered chat call', async () => (await postJson(`${stack.edgeOrigin}/v1/chat/completions`, headers, chatBody(PUBLIC_MODEL))).status === 200, 60_000, stack.children);
  say(`soak-steady: ${MODE}, ${DURATION_S} s at ${RATE} calls/s (${Math.round(STREAM_SHARE * 100)}% streaming), sampling every ${SAMPLE_S} s; pids ${JSON.stringify(stack.pids)}`);

  const load = new OpenLoopLoad({
    origin: stack.edgeOrigin, headers, plainBody: chatBody(PUBLIC_MODEL), streamBody: chatBody(PUBLIC_MODEL, true),
    rate: RATE, streamShare: STREAM_SHARE, connections: CONNECTIONS, maxInFlight: MAX_IN_FLIGHT, timeoutMs: CALL_TIMEOUT_MS,
  });
  const samples: Array<ReturnType<typeof sampleRow>> = [];
  const engines = MODE === 'processes' ? enginePids() : {};
  const cpu = cpuMeter({ ...stack.pids, ...engines });
  const t0 = performance.now();
  load.start();
  for (let next = SAMPLE_S; next <= DURATION_S; next += SAMPLE_S) {
    await sleep(Math.max(0, t0 + next * 1000 - performance.now()));
    const dead = stack.children.find((c) => c.proc.exitCode !== null || c.proc.signalCode !== null);
    if (dead) throw new Error(`${dead.name} exited (code ${dead.proc.exitCode}, signal ${dead.proc.signalCode}) during the soak`);
    const row = sampleRow((performance.now() - t0) / 1000, load.takeWindow(), stack.pids, engines, cpu(), load.openConnections());
    samples.push(row);
    const busiest = Object.entries(row.cpu_percent).filter(([, v]) => v !== null).sort((a, b) => b[1]! - a[1]!).slice(0, 3).map(([n, v]) => `${n} ${v}%`).join(', ');
    say(`${String(row.t_s).padStart(5)} s  rss ${row.rss_sum_mb} MB  fds ${row.fds_sum} (${row.load_connections} from the load)  ${row.completed} calls  p50 ${row.p50_ms} ms  p99 ${row.p99_ms} ms  errors ${row.errors}  dropped ${row.dropped}  load ${row.loadavg_1m}  cpu ${busiest}`);
  }
  await load.stop();
  const drain = load.takeWindow();
  const loadavgEnd = os.loadavg();

  const errors = samples.reduce((n, s) => n + s.errors, drain.errors);
  const dropped = samples.reduce((n, s) => n + s.dropped, drain.dropped);
  const completed = samples.reduce((n, s) => n + s.completed, drain.completed);
  const v = verdicts(samples as Sample[], MODE === 'embedded' ? 'gateway' : 'edge', DURATION_S, errors, dropped);
  const result = {
    benchmark: 'soak-steady',
    mode: MODE,
    date: startedAt.toISOString(),
    finished: new Date().toISOString(),
    git,
    command: `node --import tsx bench/soak-steady.ts --mode ${MODE} --duration ${args.duration} --rate ${RATE} --stream-share ${STREAM_SHARE} --connections ${CONNECTIONS}`,
    machine: { ...machine(), loadavg_start: loadavgStart, loadavg_end: loadavgEnd },
    note: args.note || null,
    config: { duration_s: DURATION_S, rate_per_s: RATE, stream_share: STREAM_SHARE, sample_s: SAMPLE_S, connections: CONNECTIONS, max_in_flight: MAX_IN_FLIGHT, call_timeout_ms: CALL_TIMEOUT_MS, engines: stack.engines },
    processes: Object.keys(stack.pids),
    totals: { scheduled: Math.floor(DURATION_S * RATE), completed, errors, dropped, drain },
    verdicts: v,
    ok: v.rss.ok && v.fds.ok && v.p99.ok && v.errors.ok,
    samples,
  };
  for (const [name, r] of Object.entries({ rss: v.rss, fds: v.fds, p99: v.p99, errors: v.errors })) say(`${name}: ${r.ok ? 'MET' : 'NOT MET'} (${r.criterion})`);
  say(`rss ${v.rss.plateau_sum_mb} -> ${v.rss.end_sum_mb} MB (${v.rss.growth === null ? '-' : (v.rss.growth * 100).toFixed(1)}%); p99 ${v.p99.plateau_ms} -> ${v.p99.end_ms} ms; ${completed} calls, ${errors} errors, ${dropped} dropped`);
  if (!args['no-save']) {
    const file = writeResultFile(args.out, `soak-steady-${startedAt.toISOString().slice(0, 10)}-${MODE}`, result);
    say(`wrote ${path.relative(ROOT, file)}`);
  }
  await cleanup();
  if (!result.ok) process.exitCode = 1;
}

main().catch(async (err: unknown) => {
  process.stderr.write(`soak-steady failed: ${(err as Error)?.stack ?? err}\n${logTails()}\n`);
  await cleanup();
  process.exit(1);
});
