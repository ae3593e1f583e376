/**
 * What the gateway costs on the hot path: the same non-streaming chat completion, sent by autocannon with
 * keep-alive, (a) straight to the OpenAI-format simulator and (b) through the gateway's edge (auth, routing,
 * spend guard, forwarding, usage event, billing) to that same simulator. Runs the two paths alternately at
 * each connection count, prints RPS / p50 / p99 / errors and the ratios, checks that every call succeeded
 * and was billed, and writes the figures to bench/results/<date>.json.
 *
 *   pnpm --filter @gw/bench bench                       # defaults: 8 and 64 connections, 10 s each
 *   node --import tsx bench/chat-overhead.ts --connections 8,64,128 --duration 20 --rounds 2
 *   node --import tsx bench/chat-overhead.ts --connections 64 --profile-gateway /tmp/prof --no-save
 *
 * Only loopback addresses; everything started here is stopped on exit, errors, Ctrl-C and a time budget.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { request } from 'undici';
import { deploymentPrice, listCostMicros, tokenCounts } from '@gw/catalog';
import { usdToMicros } from '@gw/platform';

const ROOT = path.resolve(__dirname, '..');
const HOST = '127.0.0.1';
const PUBLIC_MODEL = 'bench/echo-chat';
const PROVIDER_MODEL = 'echo-chat';
const PRICE = { prompt_per_million: '2.00', completion_per_million: '4.00' };
const SIMULATOR_KEY = `sim-bench-${randomBytes(8).toString('hex')}`;
const TARGET_P50_DELTA_MS_AT_8 = 1;
const TARGET_RPS_AT_64 = 3000;
const HELP = `Usage: node --import tsx bench/chat-overhead.ts [options]
  --connections 8,64     connection counts to measure (comma-separated)
  --duration 10          seconds per measured run (each path, each connection count, each round)
  --warmup 5             seconds of warm-up per path before measuring (at the largest connection count)
  --rounds 1             repeat the whole sweep; rounds alternate the path order (ABBA)
  --out bench/results    directory for <date>.json
  --no-save              print only, write no JSON
  --profile-gateway DIR  run the gateway process under node --cpu-prof, profile written to DIR on exit
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
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      connections: { type: 'string', default: '8,64' },
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '1' },
      out: { type: 'string', default: path.join(ROOT, 'bench', 'results') },
      'no-save': { type: 'boolean', default: false },
      'profile-gateway': { type: 'string' },
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
  const connections = values.connections.split(',').map((c) => int(c.trim(), '--connections', 1, 1024));
  return {
    connections,
    durationS: int(values.duration, '--duration', 1, 600),
    warmupS: int(values.warmup, '--warmup', 0, 120),
    rounds: int(values.rounds, '--rounds', 1, 10),
    outDir: path.resolve(values.out),
    save: !values['no-save'],
    profileDir: values['profile-gateway'] ? path.resolve(values['profile-gateway']) : null,
  };
}

// ---------------------------------------------------------------------------------------------- processes

interface Child {
  name: string;
  proc: ChildProcess;
  tail: string[];
  exited: Promise<void>;
}

const children: Child[] = [];
let tempDir: string | null = null;
let currentRun: autocannon.Instance | null = null;
let cleaning: Promise<void> | null = null;

function startChild(name: string, nodeArgs: string[], env: NodeJS.ProcessEnv, ipc = false): Child {
  const proc = spawn(process.execPath, nodeArgs, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? ['ipc' as const] : [])] });
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) tail.push(line);
    if (tail.length > 60) tail.splice(0, tail.length - 60);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const child = { name, proc, tail, exited };
  children.push(child);
  return child;
}

const alive = (c: Child) => c.proc.exitCode === null && c.proc.signalCode === null;

async function stopChild(c: Child, graceMs: number): Promise<void> {
  if (!alive(c)) return;
  c.proc.kill('SIGTERM');
  const timer = setTimeout(() => { if (alive(c)) c.proc.kill('SIGKILL'); }, graceMs);
  await c.exited;
  clearTimeout(timer);
}

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    currentRun?.stop();
    // The gateway first (it may be writing a CPU profile), then the simulator.
    for (const c of [...children].reverse()) await stopChild(c, 15_000);
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    tempDir = null;
  })();
  return cleaning;
}

process.on('exit', () => {
  for (const c of children) if (alive(c)) c.proc.kill('SIGKILL');
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});
for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.on(sig, () => {
    process.stderr.write(`\n${sig}: stopping the simulator and the gateway...\n`);
    cleanup().finally(() => process.exit(code));
  });
}

function logTails(): string {
  return children.map((c) => `--- ${c.name} (last lines) ---\n${c.tail.slice(-25).join('\n') || '(no output)'}`).join('\n');
}

// ---------------------------------------------------------------------------------------------- helpers

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, HOST, () => srv.close(() => resolve(true)));
  });
}

/**
 * `n` distinct ports free on loopback right now, chosen below the kernel's ephemeral range: a port from
 * that range can be taken by one of the gateway's own outgoing connections (keys, billing, bus, upstream)
 * between this check and its listen, which fails the start with EADDRINUSE.
 */
async function freePorts(n: number): Promise<number[]> {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch { /* not Linux */ }
  const low = 10_000;
  const high = Math.min(ephemeralLow, 65_536) - 1;
  const ports = new Set<number>();
  for (let tries = 0; ports.size < n && tries < 2000; tries++) {
    const port = high > low + 1000 ? low + Math.floor(Math.random() * (high - low)) : 0;
    if (port === 0) break;
    if (!ports.has(port) && (await canListen(port))) ports.add(port);
  }
  while (ports.size < n) {
    // No room below the ephemeral range: let the OS choose.
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, HOST, () => {
        const { port: p } = srv.address() as { port: number };
        srv.close(() => resolve(p));
      });
    });
    ports.add(port);
  }
  return [...ports];
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, watch: Child[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = watch.find((c) => !alive(c));
    if (dead) throw new Error(`${dead.name} exited (code ${dead.proc.exitCode}, signal ${dead.proc.signalCode}) while waiting for ${what}`);
    try {
      if (await check()) return;
    } catch { /* not yet */ }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

async function getStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(url, { headers, headersTimeout: 2000, bodyTimeout: 2000 });
  await res.body.dump();
  return res.statusCode;
}

async function postJson(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; json: any }> {
  const res = await request(url, { method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await res.body.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: res.statusCode, json };
}

/** utime + stime of a process in clock ticks (Linux; USER_HZ is 100 on every mainstream kernel). */
const TICKS_PER_S = 100;
function cpuTicks(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** Waits until the gateway's background work (usage events, billing) has drained, so it does not bleed into the next run. */
async function settle(pid: number | undefined, maxMs = 15_000): Promise<void> {
  const deadline = Date.now() + maxMs;
  let last = cpuTicks(pid);
  if (last === null) return void (await sleep(1000));
  while (Date.now() < deadline) {
    await sleep(250);
    const now = cpuTicks(pid);
    if (now === null) return;
    if (now - last <= 2) return; // under ~8% of a core over the last 250 ms
    last = now;
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

const round = (n: number, digits: number) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);

function withTimeout<T>(p: PromiseLike<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not finish within ${ms / 1000} s`)), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}

// ---------------------------------------------------------------------------------------------- load runs

type PathName = 'direct' | 'gateway';

interface Target {
  path: PathName;
  url: string;
  headers: Record<string, string>;
  body: string;
}

interface Segment {
  durationS: number;
  completed2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  latencies: number[];
  cpuTicks: { gateway: number | null; simulator: number | null };
  benchCpuUs: number;
}

async function load(target: Target, connections: number, durationS: number, pids: { gateway?: number; simulator?: number }): Promise<Segment> {
  const latencies: number[] = [];
  const gw0 = cpuTicks(pids.gateway);
  const sim0 = cpuTicks(pids.simulator);
  const bench0 = process.cpuUsage();
  const inst = autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: target.body,
    connections,
    duration: durationS,
    pipelining: 1,
    timeout: 10,
  });
  currentRun = inst;
  // autocannon's own histogram has 1 ms resolution; keep every 2xx response time (hrtime, ms) instead.
  inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const r = await withTimeout(inst, (durationS + 30) * 1000, `autocannon ${target.path} x${connections}`);
  currentRun = null;
  const bench = process.cpuUsage(bench0);
  const gw1 = cpuTicks(pids.gateway);
  const sim1 = cpuTicks(pids.simulator);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(r.statusCodeStats)) statusCodes[code] = count;
  return {
    durationS: r.duration,
    completed2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
    latencies,
    cpuTicks: { gateway: gw0 !== null && gw1 !== null ? gw1 - gw0 : null, simulator: sim0 !== null && sim1 !== null ? sim1 - sim0 : null },
    benchCpuUs: bench.user + bench.system,
  };
}

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
  cpu_percent: { gateway: number | null; simulator: number | null; bench: number | null };
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
  const pct = (ticks: Array<number | null>) => {
    if (ticks.some((t) => t === null)) return null;
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
      gateway: pct(segs.map((s) => s.cpuTicks.gateway)),
      simulator: pct(segs.map((s) => s.cpuTicks.simulator)),
      bench: round((segs.reduce((n, s) => n + s.benchCpuUs, 0) / 1e6 / seconds) * 100, 0),
    },
  };
}

// ---------------------------------------------------------------------------------------------- setup

function writeCatalog(dir: string, simulatorPort: number): string {
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify({
    providers: {
      simulator: { kind: 'openai-compatible', base_url: `http://${HOST}:${simulatorPort}/v1`, api_key_env: 'SIMULATOR_API_KEY', timeout_ms: 10_000 },
    },
    models: [{
      id: PUBLIC_MODEL,
      name: 'Benchmark echo chat (simulator)',
      owned_by: 'Gateway simulator',
      updated_at: '2026-11-01T00:00:00Z',
      description: 'The OpenAI-format simulator, for the overhead benchmark.',
      architecture: { input_modalities: ['text'], output_modalities: ['text'], tokenizer: null },
      context_length: 8192,
      per_request_limits: { prompt_tokens: 6000, completion_tokens: 2000 },
      parameter_schema: {
        temperature: { type: 'number', options: null, default: 1, min: 0, max: 2 },
        max_completion_tokens: { type: 'integer', options: null, default: null, min: 1, max: 2000 },
        stop: { type: 'array', options: null, default: null, min: null, max: null, max_items: 4 },
      },
      deployments: [{ id: 'bench-simulator', provider: 'simulator', provider_model: PROVIDER_MODEL, price: PRICE }],
    }],
  }, null, 2));
  return file;
}

function chatBody(model: string): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a concise assistant for a platform team.' },
      { role: 'user', content: 'In two sentences, what does an inference gateway do for the teams that call models through it?' },
    ],
    max_completion_tokens: 64,
    temperature: 0.2,
  });
}

function gitRevision(): string | null {
  try {
    const rev = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${rev}+dirty` : rev;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------- main

async function main(): Promise<number> {
  const opts = parseOptions();
  const maxConn = Math.max(...opts.connections);
  const budgetS = 180 + 2 * (opts.warmupS + 20) + opts.rounds * opts.connections.length * 2 * (opts.durationS + 25) + 60;
  const budget = setTimeout(() => {
    process.stderr.write(`\nbenchmark exceeded its time budget of ${budgetS} s; stopping everything\n${logTails()}\n`);
    cleanup().finally(() => process.exit(1));
  }, budgetS * 1000);

  const startedAt = new Date();
  const loadBefore = os.loadavg();
  tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-bench-'));
  const [simPort] = await freePorts(1);
  const benchKey = `sk-gw-v1-${randomBytes(24).toString('hex')}`;
  const baseEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', NODE_ENV: 'production' };
  const catalogFile = writeCatalog(tempDir, simPort);
  const simAuth = { authorization: `Bearer ${SIMULATOR_KEY}` };
  const gwAuth = { authorization: `Bearer ${benchKey}` };
  if (opts.profileDir) mkdirSync(opts.profileDir, { recursive: true });
  const profArgs = opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', opts.profileDir] : [];
  const t0 = Date.now();

  process.stdout.write(`starting the simulator (:${simPort}) and the gateway${opts.profileDir ? ` (under --cpu-prof -> ${opts.profileDir})` : ''}...\n`);
  const simulator = startChild('simulator', ['--import', 'tsx', '--import', path.join(ROOT, 'bench/exit-with-parent.ts'),
    path.join(ROOT, 'packages/simulators/src/main.ts'), '--port', String(simPort), '--host', HOST], baseEnv, true);

  let gateway: Child | null = null;
  let edgePort = 0;
  for (let attempt = 1; !gateway; attempt++) {
    const [edge, edgeAdmin, keysHttp, keysGrpc, billingHttp, billingGrpc, inferenceHttp] = await freePorts(7);
    const dataDir = path.join(tempDir, `data-${attempt}`);
    mkdirSync(dataDir);
    const gatewayEnv: NodeJS.ProcessEnv = {
      ...baseEnv,
      DATA_DIR: dataDir,
      BENCH_TEMP_DIR: tempDir,
      STORE: 'embedded',
      BUS: 'embedded',
      SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_bench', credit_usd: '1000000', management_key: benchKey }]),
      CATALOG_FILE: catalogFile,
      SIMULATOR_API_KEY: SIMULATOR_KEY,
      EDGE_PORT: String(edge),
      EDGE_ADMIN_PORT: String(edgeAdmin),
      KEYS_HTTP_PORT: String(keysHttp),
      KEYS_GRPC_PORT: String(keysGrpc),
      BILLING_HTTP_PORT: String(billingHttp),
      BILLING_GRPC_PORT: String(billingGrpc),
      INFERENCE_HTTP_PORT: String(inferenceHttp),
      KEYS_GRPC_ADDR: `${HOST}:${keysGrpc}`,
      BILLING_GRPC_ADDR: `${HOST}:${billingGrpc}`,
      KEYS_HTTP_URL: `http://${HOST}:${keysHttp}`,
      BILLING_HTTP_URL: `http://${HOST}:${billingHttp}`,
      INFERENCE_HTTP_URL: `http://${HOST}:${inferenceHttp}`,
    };
    const candidate = startChild(attempt === 1 ? 'gateway' : `gateway (attempt ${attempt})`, [...profArgs, '--import', 'tsx', path.join(ROOT, 'bench/gateway-process.ts')], gatewayEnv, true);
    try {
      await waitFor('the gateway (edge admin /readyz)', async () => (await getStatus(`http://${HOST}:${edgeAdmin}/readyz`)) === 200, 120_000, [candidate, simulator]);
      gateway = candidate;
      edgePort = edge;
    } catch (err) {
      // A port taken between the check and the listen: once more on other ports.
      if (attempt >= 3 || alive(candidate) || !candidate.tail.some((l) => l.includes('EADDRINUSE'))) throw err;
      process.stdout.write(`gateway start hit a port in use; retrying on other ports\n`);
      children.splice(children.indexOf(candidate), 1);
    }
  }
  const pids = { gateway: gateway.proc.pid, simulator: simulator.proc.pid };
  await waitFor('the simulator', async () => (await getStatus(`http://${HOST}:${simPort}/v1/models`, simAuth)) === 200, 120_000, [simulator]);
  process.stdout.write(`both ready after ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

  const json = { 'content-type': 'application/json' };
  const targets: Record<PathName, Target> = {
    direct: { path: 'direct', url: `http://${HOST}:${simPort}/v1/chat/completions`, headers: { ...simAuth, ...json }, body: chatBody(PROVIDER_MODEL) },
    gateway: { path: 'gateway', url: `http://${HOST}:${edgePort}/v1/chat/completions`, headers: { ...gwAuth, ...json }, body: chatBody(PUBLIC_MODEL) },
  };

  // Correctness of a single call on each path, and what one gateway call should cost.
  const balanceUrl = `http://${HOST}:${edgePort}/v1/billing/balance`;
  const readBalance = async (): Promise<number> => {
    const res = await request(balanceUrl, { headers: gwAuth, headersTimeout: 5000, bodyTimeout: 5000 });
    const body = (await res.body.json()) as { data?: { spendable?: string } };
    if (res.statusCode !== 200 || typeof body.data?.spendable !== 'string') throw new Error(`balance: HTTP ${res.statusCode} ${JSON.stringify(body)}`);
    return usdToMicros(body.data.spendable);
  };
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
  await probe(targets.direct);
  const usage = await probe(targets.gateway);
  gatewayCalls++;
  const perCallMicros = listCostMicros(deploymentPrice(PRICE), tokenCounts(usage));

  const warnings: string[] = [];
  const checkSegment = (label: string, s: Segment) => {
    if (s.non2xx > 0 || s.errors > 0) {
      const w = `WARNING: ${label}: ${s.non2xx} non-2xx (${JSON.stringify(s.statusCodes)}), ${s.errors} errors (${s.timeouts} timeouts)`;
      warnings.push(w);
      process.stdout.write(w + '\n');
    }
  };

  if (opts.warmupS > 0) {
    for (const p of ['direct', 'gateway'] as const) {
      process.stdout.write(`warm-up: ${p}, ${maxConn} connections, ${opts.warmupS} s\n`);
      await settle(pids.gateway);
      const s = await load(targets[p], maxConn, opts.warmupS, pids);
      if (p === 'gateway') { gatewayCalls += s.completed2xx; inFlightAllowance += maxConn; }
      checkSegment(`warm-up ${p}`, s);
    }
  }

  const segments = new Map<string, Segment[]>();
  for (let r = 0; r < opts.rounds; r++) {
    for (const c of opts.connections) {
      const order: PathName[] = r % 2 === 0 ? ['direct', 'gateway'] : ['gateway', 'direct'];
      for (const p of order) {
        await settle(pids.gateway);
        process.stdout.write(`round ${r + 1}/${opts.rounds}: ${p}, ${c} connections, ${opts.durationS} s ... `);
        const s = await load(targets[p], c, opts.durationS, pids);
        process.stdout.write(`${Math.round(s.completed2xx / s.durationS)} req/s\n`);
        if (p === 'gateway') { gatewayCalls += s.completed2xx; inFlightAllowance += c; }
        checkSegment(`${p} x${c} round ${r + 1}`, s);
        const key = `${c}:${p}`;
        segments.set(key, [...(segments.get(key) ?? []), s]);
      }
    }
  }
  const loadAfter = os.loadavg();

  // Billing: every successful gateway call must have been charged exactly once (usage events are async, so
  // wait for the charges to arrive and then for the balance to stay put). The calls autocannon abandoned in
  // flight at the end of each run (at most its connection count) may be billed too: the upstream answered.
  const minMicros = gatewayCalls * perCallMicros;
  const maxMicros = (gatewayCalls + inFlightAllowance) * perCallMicros;
  let balanceEnd = await readBalance();
  const billDeadline = Date.now() + 60_000;
  while (balanceStart - balanceEnd < minMicros && Date.now() < billDeadline) {
    await sleep(500);
    balanceEnd = await readBalance();
  }
  for (let stable = 0; stable < 2 && Date.now() < billDeadline;) {
    await sleep(1000); // a late or duplicate charge would show up here
    const next = await readBalance();
    stable = next === balanceEnd ? stable + 1 : 0;
    balanceEnd = next;
  }
  const billedMicros = balanceStart - balanceEnd;
  const callsBilled = perCallMicros > 0 ? billedMicros / perCallMicros : null;
  const billing = {
    balance_start_usd: (balanceStart / 1e6).toFixed(6),
    balance_end_usd: (balanceEnd / 1e6).toFixed(6),
    billed_usd: (billedMicros / 1e6).toFixed(6),
    per_call_usd: (perCallMicros / 1e6).toFixed(6),
    gateway_calls_2xx: gatewayCalls,
    calls_billed: callsBilled,
    abandoned_in_flight_max: inFlightAllowance,
    ok: billedMicros > 0 && billedMicros >= minMicros && billedMicros <= maxMicros && Number.isInteger(callsBilled),
  };
  if (billedMicros <= 0) warnings.push(`WARNING: the balance did not fall (start ${billing.balance_start_usd}, end ${billing.balance_end_usd}): the calls were not billed`);
  else if (!billing.ok) {
    warnings.push(`WARNING: billed ${billing.billed_usd} USD = ${callsBilled} calls, expected ${gatewayCalls} to ${gatewayCalls + inFlightAllowance} calls (${gatewayCalls} answered + at most ${inFlightAllowance} abandoned in flight) at ${perCallMicros} micro-USD each`);
  }

  // Report.
  const rows: Row[] = [];
  const ratios: Array<{ connections: number; rps_ratio: number | null; p50_delta_ms: number | null; p99_delta_ms: number | null }> = [];
  for (const c of opts.connections) {
    const d = summarize(c, 'direct', segments.get(`${c}:direct`) ?? []);
    const g = summarize(c, 'gateway', segments.get(`${c}:gateway`) ?? []);
    rows.push(d, g);
    ratios.push({
      connections: c,
      rps_ratio: d.rps && g.rps !== null ? round(g.rps / d.rps, 3) : null,
      p50_delta_ms: d.p50_ms !== null && g.p50_ms !== null ? round(g.p50_ms - d.p50_ms, 3) : null,
      p99_delta_ms: d.p99_ms !== null && g.p99_ms !== null ? round(g.p99_ms - d.p99_ms, 3) : null,
    });
  }
  const at8 = ratios.find((r) => r.connections === 8);
  const gw64 = rows.find((r) => r.connections === 64 && r.path === 'gateway');
  const targetsOut = {
    p50_overhead_at_8: at8 ? { limit_ms: TARGET_P50_DELTA_MS_AT_8, value_ms: at8.p50_delta_ms, met: at8.p50_delta_ms !== null && at8.p50_delta_ms <= TARGET_P50_DELTA_MS_AT_8 } : null,
    gateway_rps_at_64: gw64 ? { min_rps: TARGET_RPS_AT_64, value_rps: gw64.rps, met: gw64.rps !== null && gw64.rps >= TARGET_RPS_AT_64 } : null,
  };

  const fmt = (v: number | null, d = 0) => (v === null ? '-' : v.toFixed(d));
  const lines: string[] = [];
  const header = ['conns', 'path', 'RPS', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'cpu% gw', 'cpu% sim', 'cpu% bench'];
  const table = rows.map((r) => [String(r.connections), r.path, fmt(r.rps), fmt(r.p50_ms, 2), fmt(r.p99_ms, 2), String(r.errors), String(r.non_2xx),
    fmt(r.cpu_percent.gateway), fmt(r.cpu_percent.simulator), fmt(r.cpu_percent.bench)]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  lines.push('', line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...table.map(line), '');
  for (const r of ratios) {
    lines.push(`${String(r.connections).padStart(4)} connections: gateway RPS / direct RPS = ${fmt(r.rps_ratio, 3)}; gateway p50 - direct p50 = ${r.p50_delta_ms === null ? '-' : (r.p50_delta_ms >= 0 ? '+' : '') + r.p50_delta_ms.toFixed(2)} ms (p99 ${r.p99_delta_ms === null ? '-' : (r.p99_delta_ms >= 0 ? '+' : '') + r.p99_delta_ms.toFixed(2)} ms)`);
  }
  lines.push(`billing: balance fell by ${billing.billed_usd} USD = ${callsBilled} calls x ${billing.per_call_usd} USD, for ${gatewayCalls} answered gateway calls (+ up to ${inFlightAllowance} abandoned in flight at run ends)${billing.ok ? ': billed, once each' : ''}`);
  if (targetsOut.p50_overhead_at_8) lines.push(`target: p50 overhead at 8 connections <= ${TARGET_P50_DELTA_MS_AT_8} ms: ${targetsOut.p50_overhead_at_8.met ? 'MET' : 'NOT MET'} (${fmt(targetsOut.p50_overhead_at_8.value_ms, 2)} ms)`);
  if (targetsOut.gateway_rps_at_64) lines.push(`target: gateway >= ${TARGET_RPS_AT_64} RPS at 64 connections: ${targetsOut.gateway_rps_at_64.met ? 'MET' : 'NOT MET'} (${fmt(targetsOut.gateway_rps_at_64.value_rps)} RPS)`);
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
      request_bytes: Buffer.byteLength(targets.gateway.body),
      public_model: PUBLIC_MODEL,
      provider_model: PROVIDER_MODEL,
      gateway_profiled: opts.profileDir !== null,
    },
    results: rows,
    ratios,
    targets: targetsOut,
    billing,
    warnings,
  };
  if (opts.save) {
    mkdirSync(opts.outDir, { recursive: true });
    const day = startedAt.toISOString().slice(0, 10);
    let file = path.join(opts.outDir, `${day}.json`);
    for (let n = 2; existsSync(file); n++) file = path.join(opts.outDir, `${day}-${n}.json`);
    writeFileSync(file, JSON.stringify(output, null, 2) + '\n');
    process.stdout.write(`wrote ${path.relative(process.cwd(), file) || file}\n`);
  }

  await cleanup();
  clearTimeout(budget);
  if (opts.profileDir) process.stdout.write(`gateway CPU profile in ${opts.profileDir} (summarize: node --import tsx bench/profile-summary.ts ${opts.profileDir})\n`);
  return warnings.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    process.stderr.write(`benchmark failed: ${(err as Error)?.stack ?? err}\n${logTails()}\n`);
    await cleanup();
    process.exit(1);
  },
);
