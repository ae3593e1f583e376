/**
 * What the gateway costs on the hot path: the same non-streaming chat completion, sent by autocannon with
 * keep-alive, (a) straight to the OpenAI-format simulator and (b) through the gateway's edge (auth, routing,
 * spend guard, forwarding, usage event, billing) to that same simulator, beside the Portkey gateway (a real
 * peer) and a bare Node pass-through (`passthrough-proxy.ts`: the floor, what the HTTP round trip alone costs
 * here). Runs the paths alternately at each connection count, prints RPS / p50 / p99 / errors and the ratios, checks that every call succeeded
 * and was billed, and writes the figures to bench/results/<date>.json.
 *
 *   pnpm --filter @gw/bench bench                       # defaults: 8 and 64 connections, 10 s each
 *   node --import tsx bench/chat-overhead.ts --connections 8,64,128 --duration 20 --rounds 2
 *   node --import tsx bench/chat-overhead.ts --connections 64 --profile-gateway /tmp/prof --no-save
 *
 * Only loopback addresses; everything started here is stopped on exit, errors, Ctrl-C and a time budget.
 */
import { mkdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { cleanup, installExitHandlers, runBenchmark } from './lib/children';
import { prepareRun, startSimulator } from './lib/run-setup';
import { startBenchGateway } from './lib/gateway';
import { unaryLoad as load, type Pids, type Segment, type UnaryTarget } from './lib/unary-load';
import { writeResultFile } from './lib/results';
import { HOST, getStatus, postJson, waitFor } from './lib/net';
import { envOption, intOption, roundOptions, roundValues } from './lib/options';
import { TICKS_PER_S, microsPerCall, percentile, round, settle } from './lib/stats';
import { balanceReader, checkBilling, settledBalance } from './lib/billing';
import { startPortkey, PORTKEY_VERSION, type Portkey } from './lib/portkey';
import { startPassthrough, type Passthrough } from './lib/passthrough';
import { fmt, formatTable, signed } from './lib/report';
import { runStreamPhase } from './lib/stream-phase';
import { PRICE, PROVIDER_MODEL, PUBLIC_MODEL, chatBody, gitRevision } from './lib/setup';

const SIMULATOR_KEY = `sim-bench-${randomBytes(8).toString('hex')}`;
const TARGET_P50_DELTA_MS_AT_8 = 1;
const TARGET_RPS_AT_64 = 3000;
const TARGET_TTFT_DELTA_MS_AT_8 = 1;
const TARGET_PORTKEY_RATIO_AT_64 = 3;
const HELP = `Usage: node --import tsx bench/chat-overhead.ts [options]
  --connections 8,64     connection counts to measure (comma-separated)
  --duration 10          seconds per measured run (each path, each connection count, each round)
  --warmup 5             seconds of warm-up per path before measuring (at the largest connection count)
  --rounds 3             repeat the whole sweep; rounds alternate the path order (ABBA) and are pooled
  --out bench/results    directory for <date>.json
  --no-save              print only, write no JSON
  --no-stream            skip the streaming half (stream: true, time to first token)
  --no-portkey           skip the Portkey gateway (the peer measured beside direct and gateway)
  --no-passthrough       skip the bare Node pass-through (the floor: no auth, billing or archive)
  --profile-gateway DIR  run the gateway process under node --cpu-prof, profile written to DIR on exit
  --gateway-env K=V      one more variable for the gateway process (repeatable), to compare settings
  --help`;

// ---------------------------------------------------------------------------------------------- options

interface Options {
  connections: number[];
  durationS: number;
  warmupS: number;
  rounds: number;
  outDir: string;
  save: boolean;
  profileDir: string | null;
  stream: boolean;
  portkey: boolean;
  passthrough: boolean;
  /** Variables added to the gateway process's environment (recorded in the results). */
  gatewayEnv: Record<string, string>;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      ...roundOptions('8,64'),
      'profile-gateway': { type: 'string' },
      'no-stream': { type: 'boolean', default: false },
      'no-portkey': { type: 'boolean', default: false },
      'no-passthrough': { type: 'boolean', default: false },
      'gateway-env': { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP + '\n');
    process.exit(0);
  }
  const connections = values.connections.split(',').map((c) => intOption(c.trim(), '--connections', 1, 1024));
  const gatewayEnv = envOption(values['gateway-env'], '--gateway-env');
  return {
    connections,
    ...roundValues(values),
    profileDir: values['profile-gateway'] ? path.resolve(values['profile-gateway']) : null,
    stream: !values['no-stream'],
    portkey: !values['no-portkey'],
    passthrough: !values['no-passthrough'],
    gatewayEnv,
  };
}

// ---------------------------------------------------------------------------------------------- load runs

type PathName = 'direct' | 'gateway' | 'portkey' | 'passthrough';
type Target = UnaryTarget<PathName>;

interface Row {
  connections: number;
  path: PathName;
  rps: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  mean_ms: number | null;
  requests_2xx: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
  seconds: number;
  cpu_percent: Record<string, number | null>;
  /** The gateway's CPU per answered call by thread name, microseconds (gateway rows only). */
  gateway_cpu_us_per_call_by_thread: Record<string, number | null> | null;
}

function summarize(connections: number, pathName: PathName, segs: Segment[]): Row {
  const seconds = segs.reduce((s, x) => s + x.durationS, 0);
  const all = new Float64Array(segs.reduce((n, s) => n + s.latencies.length, 0));
  let i = 0;
  for (const s of segs) for (const v of s.latencies) all[i++] = v;
  all.sort();
  const sum = all.reduce((a, b) => a + b, 0);
  const ok = segs.reduce((n, s) => n + s.completed2xx, 0);
  const statusCodes: Record<string, number> = {};
  for (const s of segs) for (const [k, v] of Object.entries(s.statusCodes)) statusCodes[k] = (statusCodes[k] ?? 0) + v;
  const pct = (ticks: Array<number | null | undefined>) => {
    if (ticks.some((t) => t === null || t === undefined)) return null;
    const sumTicks = ticks.reduce<number>((a, b) => a + (b ?? 0), 0);
    return round((sumTicks / TICKS_PER_S / seconds) * 100, 0);
  };
  return {
    connections,
    path: pathName,
    rps: round(ok / seconds, 0),
    p50_ms: round(percentile(all, 50), 3),
    p99_ms: round(percentile(all, 99), 3),
    mean_ms: round(all.length ? sum / all.length : NaN, 3),
    requests_2xx: ok,
    non_2xx: segs.reduce((n, s) => n + s.non2xx, 0),
    errors: segs.reduce((n, s) => n + s.errors, 0),
    timeouts: segs.reduce((n, s) => n + s.timeouts, 0),
    status_codes: statusCodes,
    seconds: round(seconds, 2)!,
    cpu_percent: {
      ...Object.fromEntries(Object.keys(segs[0]?.cpuTicks ?? {}).map((k) => [k, pct(segs.map((s) => s.cpuTicks[k]))])),
      bench: round((segs.reduce((n, s) => n + s.benchCpuUs, 0) / 1e6 / seconds) * 100, 0),
    },
    gateway_cpu_us_per_call_by_thread: perCallByThread(segs, ok),
  };
}

/** Each thread name's CPU per answered call (µs), busiest first; null unless every segment recorded its threads. */
function perCallByThread(segs: Segment[], calls: number): Record<string, number | null> | null {
  if (calls === 0 || segs.length === 0 || segs.some((s) => s.threadTicks === null)) return null;
  const ticks: Record<string, number> = {};
  for (const s of segs) for (const [name, t] of Object.entries(s.threadTicks!)) ticks[name] = (ticks[name] ?? 0) + t;
  return Object.fromEntries(Object.entries(ticks).filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1])
    .map(([name, t]) => [name, microsPerCall(t, calls)]));
}

// ---------------------------------------------------------------------------------------------- main

async function main(): Promise<number> {
  installExitHandlers();
  const opts = parseOptions();
  const maxConn = Math.max(...opts.connections);
  const runs = 2 + (opts.portkey ? 1 : 0) + (opts.passthrough ? 1 : 0) + (opts.stream ? (opts.passthrough ? 3 : 2) : 0);
  const budgetS = 180 + runs * (opts.warmupS + 20) + opts.rounds * opts.connections.length * runs * (opts.durationS + 25) + (opts.stream ? 120 : 0) + 60;
  const run = await prepareRun('benchmark', budgetS);
  const { startedAt, loadBefore, tempDir, simPort, benchKey, baseEnv, catalogFile } = run;
  const simAuth = { authorization: `Bearer ${SIMULATOR_KEY}` };
  const gwAuth = { authorization: `Bearer ${benchKey}` };
  if (opts.profileDir) mkdirSync(opts.profileDir, { recursive: true });
  const profArgs = opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', opts.profileDir] : [];
  const t0 = Date.now();

  process.stdout.write(`starting the simulator (:${simPort}) and the gateway${opts.profileDir ? ` (under --cpu-prof -> ${opts.profileDir})` : ''}...\n`);
  const simulator = startSimulator(run);

  const { child: gateway, edgePort } = await startBenchGateway({
    name: 'gateway', tempDir, baseEnv, benchKey, catalogFile, simulatorKey: SIMULATOR_KEY, nodeArgs: profArgs, extraEnv: opts.gatewayEnv, watch: [simulator],
  });
  await waitFor('the simulator', async () => (await getStatus(`http://${HOST}:${simPort}/v1/models`, simAuth)) === 200, 120_000, [simulator]);
  const json = { 'content-type': 'application/json' };
  const simChatUrl = `http://${HOST}:${simPort}/v1/chat/completions`;
  let portkey: Portkey | null = null;
  if (opts.portkey) {
    portkey = await startPortkey(`http://${HOST}:${simPort}/v1`, SIMULATOR_KEY, baseEnv);
    const pk = portkey;
    await waitFor('the Portkey gateway', async () => (await postJson(pk.chatUrl, { ...pk.headers, ...json }, chatBody(PROVIDER_MODEL))).status === 200, 60_000, [pk.child, simulator]);
  }
  let passthrough: Passthrough | null = null;
  if (opts.passthrough) {
    passthrough = await startPassthrough(`http://${HOST}:${simPort}`, PROVIDER_MODEL, SIMULATOR_KEY, baseEnv);
    const pt = passthrough;
    await waitFor('the pass-through', async () => (await postJson(pt.chatUrl, json, chatBody(PUBLIC_MODEL)).catch(() => ({ status: 0 }))).status === 200, 60_000, [pt.child, simulator]);
  }
  const pids: Pids = {
    gateway: gateway.proc.pid, simulator: simulator.proc.pid,
    ...(portkey ? { portkey: portkey.child.proc.pid } : {}), ...(passthrough ? { passthrough: passthrough.child.proc.pid } : {}),
  };
  process.stdout.write(`all ready after ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

  const targets: Partial<Record<PathName, Target>> = {
    direct: { path: 'direct', url: simChatUrl, headers: { ...simAuth, ...json }, body: chatBody(PROVIDER_MODEL) },
    gateway: { path: 'gateway', url: `http://${HOST}:${edgePort}/v1/chat/completions`, headers: { ...gwAuth, ...json }, body: chatBody(PUBLIC_MODEL) },
    ...(portkey ? { portkey: { path: 'portkey' as const, url: portkey.chatUrl, headers: { ...portkey.headers, ...json }, body: chatBody(PROVIDER_MODEL) } } : {}),
    ...(passthrough ? { passthrough: { path: 'passthrough' as const, url: passthrough.chatUrl, headers: json, body: chatBody(PUBLIC_MODEL) } } : {}),
  };
  const paths = (['direct', 'gateway', 'portkey', 'passthrough'] as const).filter((p) => targets[p]);

  // Correctness of a single call on each path, and what one gateway call should cost.
  const readBalance = balanceReader(`http://${HOST}:${edgePort}`, gwAuth);
  const balanceStart = await readBalance();
  let gatewayCalls = 0;
  // Requests in flight when autocannon stops a run are served and billed but never counted as responses.
  let inFlightAllowance = 0;
  const probe = async (t: Target) => {
    const r = await postJson(t.url, t.headers, t.body);
    const content = r.json?.choices?.[0]?.message?.content;
    if (r.status !== 200 || typeof content !== 'string' || !(r.json?.usage?.prompt_tokens > 0)) {
      throw new Error(`${t.path} probe failed: HTTP ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
    }
    return r.json.usage as { prompt_tokens: number; completion_tokens: number };
  };
  for (const p of paths) if (p !== 'gateway') await probe(targets[p]!);
  const usage = await probe(targets.gateway!);
  gatewayCalls++;
  const perCallMicros = listCostMicros(deploymentPrice(PRICE), tokenCounts(usage));

  const warnings: string[] = [];
  const warn = (w: string) => {
    warnings.push(w);
    process.stdout.write(w + '\n');
  };
  const checkSegment = (label: string, s: Segment) => {
    if (s.non2xx > 0 || s.errors > 0) warn(`WARNING: ${label}: ${s.non2xx} non-2xx (${JSON.stringify(s.statusCodes)}), ${s.errors} errors (${s.timeouts} timeouts)`);
  };

  if (opts.warmupS > 0) {
    for (const p of paths) {
      process.stdout.write(`warm-up: ${p}, ${maxConn} connections, ${opts.warmupS} s\n`);
      await settle(pids.gateway);
      const s = await load(targets[p]!, maxConn, opts.warmupS, pids, p === 'gateway' ? pids.gateway : undefined);
      if (p === 'gateway') { gatewayCalls += s.completed2xx; inFlightAllowance += maxConn; }
      checkSegment(`warm-up ${p}`, s);
    }
  }

  const segments = new Map<string, Segment[]>();
  for (let r = 0; r < opts.rounds; r++) {
    for (const c of opts.connections) {
      for (const p of r % 2 === 0 ? paths : [...paths].reverse()) {
        await settle(pids.gateway);
        process.stdout.write(`round ${r + 1}/${opts.rounds}: ${p}, ${c} connections, ${opts.durationS} s ... `);
        const s = await load(targets[p]!, c, opts.durationS, pids, p === 'gateway' ? pids.gateway : undefined);
        process.stdout.write(`${Math.round(s.completed2xx / s.durationS)} req/s\n`);
        if (p === 'gateway') { gatewayCalls += s.completed2xx; inFlightAllowance += c; }
        checkSegment(`${p} x${c} round ${r + 1}`, s);
        const key = `${c}:${p}`;
        segments.set(key, [...(segments.get(key) ?? []), s]);
      }
    }
  }

  // Billing: every successful gateway call charged exactly once, once the usage events have landed. The
  // calls autocannon abandoned in flight at the end of each run (at most its connection count) may be
  // billed too: the upstream answered them.
  const balanceEnd = await settledBalance(readBalance, balanceStart, gatewayCalls * perCallMicros);
  const billing = checkBilling(balanceStart, balanceEnd, perCallMicros, gatewayCalls, inFlightAllowance);
  if (!billing.ok) warn(`WARNING: billed ${billing.billed_usd} USD = ${billing.calls_billed} calls, expected ${gatewayCalls} to ${gatewayCalls + inFlightAllowance} (${gatewayCalls} answered + at most ${inFlightAllowance} abandoned in flight) at ${perCallMicros} micro-USD each`);

  const streaming = opts.stream
    ? await runStreamPhase({
      targets: {
        direct: { path: 'direct', origin: `http://${HOST}:${simPort}`, pathname: '/v1/chat/completions', headers: { ...simAuth, ...json }, body: chatBody(PROVIDER_MODEL, true) },
        gateway: { path: 'gateway', origin: `http://${HOST}:${edgePort}`, pathname: '/v1/chat/completions', headers: { ...gwAuth, ...json }, body: chatBody(PUBLIC_MODEL, true) },
        ...(passthrough ? { passthrough: { path: 'passthrough', origin: passthrough.origin, pathname: '/v1/chat/completions', headers: json, body: chatBody(PUBLIC_MODEL, true) } } : {}),
      },
      connections: opts.connections, durationS: opts.durationS, warmupS: opts.warmupS, rounds: opts.rounds,
      pids: { gateway: pids.gateway, simulator: pids.simulator, ...(passthrough ? { passthrough: pids.passthrough } : {}) }, readBalance, warn,
    })
    : null;
  const loadAfter = os.loadavg();

  // Report.
  const rows: Row[] = [];
  const ratios: Array<{
    connections: number; rps_ratio: number | null; p50_delta_ms: number | null; p99_delta_ms: number | null; gateway_vs_portkey_rps: number | null;
    passthrough_p50_delta_ms: number | null; gateway_vs_passthrough_rps: number | null; passthrough_vs_portkey_rps: number | null;
  }> = [];
  for (const c of opts.connections) {
    const byPath = Object.fromEntries(paths.map((p) => [p, summarize(c, p, segments.get(`${c}:${p}`) ?? [])])) as Partial<Record<PathName, Row>>;
    const d = byPath.direct!;
    const g = byPath.gateway!;
    const pk = byPath.portkey;
    const pt = byPath.passthrough;
    rows.push(...paths.map((p) => byPath[p]!));
    ratios.push({
      connections: c,
      rps_ratio: d.rps && g.rps !== null ? round(g.rps / d.rps, 3) : null,
      p50_delta_ms: d.p50_ms !== null && g.p50_ms !== null ? round(g.p50_ms - d.p50_ms, 3) : null,
      p99_delta_ms: d.p99_ms !== null && g.p99_ms !== null ? round(g.p99_ms - d.p99_ms, 3) : null,
      gateway_vs_portkey_rps: pk?.rps && g.rps !== null ? round(g.rps / pk.rps, 3) : null,
      passthrough_p50_delta_ms: pt && d.p50_ms !== null && pt.p50_ms !== null ? round(pt.p50_ms - d.p50_ms, 3) : null,
      gateway_vs_passthrough_rps: pt?.rps && g.rps !== null ? round(g.rps / pt.rps, 3) : null,
      passthrough_vs_portkey_rps: pk?.rps && pt?.rps ? round(pt.rps / pk.rps, 3) : null,
    });
  }
  const at8 = ratios.find((r) => r.connections === 8);
  const at64 = ratios.find((r) => r.connections === 64);
  const gw64 = rows.find((r) => r.connections === 64 && r.path === 'gateway');
  const streamAt8 = streaming?.ratios.find((r) => r.connections === 8);
  const targetsOut = {
    p50_overhead_at_8: at8 ? { limit_ms: TARGET_P50_DELTA_MS_AT_8, value_ms: at8.p50_delta_ms, met: at8.p50_delta_ms !== null && at8.p50_delta_ms <= TARGET_P50_DELTA_MS_AT_8 } : null,
    ttft_overhead_at_8: streamAt8 ? { limit_ms: TARGET_TTFT_DELTA_MS_AT_8, value_ms: streamAt8.ttft_p50_delta_ms, met: streamAt8.ttft_p50_delta_ms !== null && streamAt8.ttft_p50_delta_ms <= TARGET_TTFT_DELTA_MS_AT_8 } : null,
    gateway_vs_portkey_at_64: at64?.gateway_vs_portkey_rps != null ? { min_ratio: TARGET_PORTKEY_RATIO_AT_64, value_ratio: at64.gateway_vs_portkey_rps, met: at64.gateway_vs_portkey_rps >= TARGET_PORTKEY_RATIO_AT_64 } : null,
    gateway_rps_at_64: gw64 ? { min_rps: TARGET_RPS_AT_64, value_rps: gw64.rps, met: gw64.rps !== null && gw64.rps >= TARGET_RPS_AT_64 } : null,
  };

  const lines: string[] = ['', 'non-streaming chat', ...formatTable(
    ['conns', 'path', 'RPS', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'cpu% gw', 'cpu% sim', 'cpu% portkey', 'cpu% pass', 'cpu% bench'],
    rows.map((r) => [String(r.connections), r.path, fmt(r.rps), fmt(r.p50_ms, 2), fmt(r.p99_ms, 2), String(r.errors), String(r.non_2xx),
      fmt(r.cpu_percent.gateway), fmt(r.cpu_percent.simulator), fmt(r.cpu_percent.portkey), fmt(r.cpu_percent.passthrough), fmt(r.cpu_percent.bench)]),
  ), ''];
  for (const r of ratios) {
    lines.push(`${String(r.connections).padStart(4)} connections: gateway RPS / direct RPS = ${fmt(r.rps_ratio, 3)}; gateway p50 - direct p50 = ${signed(r.p50_delta_ms)} ms (p99 ${signed(r.p99_delta_ms)} ms)${portkey ? `; gateway RPS / Portkey RPS = ${fmt(r.gateway_vs_portkey_rps, 3)}` : ''}`);
    if (passthrough) {
      lines.push(`${' '.repeat(6)}floor (bare pass-through): p50 - direct p50 = ${signed(r.passthrough_p50_delta_ms)} ms; gateway RPS / pass-through RPS = ${fmt(r.gateway_vs_passthrough_rps, 3)}${portkey ? `; pass-through RPS / Portkey RPS = ${fmt(r.passthrough_vs_portkey_rps, 3)}` : ''}`);
    }
  }
  for (const r of rows) {
    const threads = r.gateway_cpu_us_per_call_by_thread;
    if (!threads) continue;
    const total = Object.values(threads).reduce<number>((a, b) => a + (b ?? 0), 0);
    lines.push(`${String(r.connections).padStart(4)} connections: gateway CPU per answered call ${total} µs, by thread: ${Object.entries(threads).map(([name, us]) => `${name} ${us}`).join(', ')}`);
  }
  lines.push(`billing: balance fell by ${billing.billed_usd} USD = ${billing.calls_billed} calls x ${billing.per_call_usd} USD, for ${gatewayCalls} answered gateway calls (+ up to ${inFlightAllowance} abandoned in flight at run ends)${billing.ok ? ': billed, once each' : ''}`);
  if (streaming) {
    lines.push('', 'streaming chat (TTFT = request start to the first data: chunk with content)', ...formatTable(
      ['conns', 'path', 'streams/s', 'TTFT p50', 'TTFT p99', 'total p50', 'total p99', 'failed', 'cpu% gw', 'cpu% sim', 'cpu% pass', 'cpu% bench'],
      streaming.rows.map((r) => [String(r.connections), r.path, fmt(r.streams_per_s), fmt(r.ttft_p50_ms, 2), fmt(r.ttft_p99_ms, 2), fmt(r.total_p50_ms, 2), fmt(r.total_p99_ms, 2),
        String(r.failed), fmt(r.cpu_percent.gateway), fmt(r.cpu_percent.simulator), fmt(r.cpu_percent.passthrough), fmt(r.cpu_percent.bench)]),
    ), '');
    for (const r of streaming.ratios) {
      lines.push(`${String(r.connections).padStart(4)} connections: gateway streams/s / direct = ${fmt(r.streams_per_s_ratio, 3)}; TTFT added p50 ${signed(r.ttft_p50_delta_ms)} ms, p99 ${signed(r.ttft_p99_delta_ms)} ms; total added p50 ${signed(r.total_p50_delta_ms)} ms, p99 ${signed(r.total_p99_delta_ms)} ms${passthrough ? `; the bare pass-through adds ${signed(r.passthrough_ttft_p50_delta_ms)} ms to the TTFT p50` : ''}`);
    }
    const sb = streaming.billing;
    lines.push(`stream billing: balance fell by ${sb.billed_usd} USD = ${sb.calls_billed} streams x ${sb.per_call_usd} USD, for ${sb.answered} answered gateway streams${sb.ok ? ': billed, once each' : ''}`);
  }
  lines.push('');
  const verdict = (met: boolean) => (met ? 'MET' : 'NOT MET');
  const t = targetsOut;
  if (t.p50_overhead_at_8) lines.push(`target: p50 added at 8 connections <= ${TARGET_P50_DELTA_MS_AT_8} ms: ${verdict(t.p50_overhead_at_8.met)} (${signed(t.p50_overhead_at_8.value_ms)} ms)`);
  if (t.ttft_overhead_at_8) lines.push(`target: TTFT p50 added at 8 connections <= ${TARGET_TTFT_DELTA_MS_AT_8} ms: ${verdict(t.ttft_overhead_at_8.met)} (${signed(t.ttft_overhead_at_8.value_ms)} ms)`);
  if (t.gateway_vs_portkey_at_64) lines.push(`target: gateway >= ${TARGET_PORTKEY_RATIO_AT_64}x Portkey's RPS at 64 connections: ${verdict(t.gateway_vs_portkey_at_64.met)} (${fmt(t.gateway_vs_portkey_at_64.value_ratio, 3)}x)`);
  if (t.gateway_rps_at_64) lines.push(`target: gateway >= ${TARGET_RPS_AT_64} RPS at 64 connections: ${verdict(t.gateway_rps_at_64.met)} (${fmt(t.gateway_rps_at_64.value_rps)} RPS)`);
  lines.push(`machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model.trim() ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}; load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`);
  lines.push(...warnings);
  process.stdout.write(lines.join('\n') + '\n');

  const output = {
    benchmark: 'chat-overhead',
    date: startedAt.toISOString(),
    git: gitRevision(),
    command: `node --import tsx bench/chat-overhead.ts ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      nproc: os.availableParallelism(),
      cpu: os.cpus()[0]?.model.trim() ?? null,
      mem_total_gib: round(os.totalmem() / 2 ** 30, 1),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadavg_before: loadBefore.map((l) => round(l, 2)),
      loadavg_after: loadAfter.map((l) => round(l, 2)),
    },
    config: {
      connections: opts.connections,
      duration_s: opts.durationS,
      warmup_s: opts.warmupS,
      rounds: opts.rounds,
      keep_alive: true,
      pipelining: 1,
      request_bytes: Buffer.byteLength(targets.gateway!.body),
      streaming: opts.stream,
      portkey: opts.portkey,
      passthrough: opts.passthrough,
      public_model: PUBLIC_MODEL,
      provider_model: PROVIDER_MODEL,
      gateway_profiled: opts.profileDir !== null,
      gateway_env: opts.gatewayEnv,
    },
    peer: portkey ? { name: '@portkey-ai/gateway', version: PORTKEY_VERSION, routing: 'x-portkey-provider: openai + x-portkey-custom-host (the simulator)' } : null,
    floor: passthrough ? { name: 'bench/passthrough-proxy.ts', what: 'node:http + undici pool: request parsed, model and credential swapped, unary answer parsed and written again, stream bytes passed on; no auth, limits, billing or archive' } : null,
    results: rows,
    ratios,
    streaming: streaming ? { results: streaming.rows, ratios: streaming.ratios, billing: streaming.billing } : null,
    targets: targetsOut,
    billing,
    warnings,
  };
  if (opts.save) {
    const file = writeResultFile(opts.outDir, startedAt.toISOString().slice(0, 10), output);
    process.stdout.write(`wrote ${path.relative(process.cwd(), file) || file}\n`);
  }

  await cleanup();
  run.clearBudget();
  if (opts.profileDir) process.stdout.write(`gateway CPU profile in ${opts.profileDir} (summarize: node --import tsx bench/profile-summary.ts ${opts.profileDir})\n`);
  return warnings.length > 0 ? 1 : 0;
}

runBenchmark('benchmark', main);
