import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createBus, type Bus } from '@gw/bus';
import { createLogger } from '@gw/platform';
import { startLocalStack } from '@gw/local-stack';
import { REQUEST_COUNT_PATH, startSimulators } from '@gw/simulators';
import { E2E_SLOW_LATENCY_MS, writeE2ECatalog } from './catalog';
import { freeServicePorts, serviceAddressEnv, type ServicePorts } from './service-ports';
import { freePort, httpOk, httpSettled, waitFor } from './ports';

export type StackMode = 'processes' | 'embedded';
export type ServiceName = 'billing' | 'keys' | 'inference' | 'webhooks' | 'edge' | 'batch' | 'batch-2' | 'media'
  | 'billing-2' | 'keys-2' | 'inference-2' | 'webhooks-2' | 'edge-2' | 'media-2';

/** Short async chat timings so lease take-overs and cancels happen within an e2e test's patience. */
const ASYNC_CHAT_E2E_ENV = { ASYNC_CHAT_LEASE_MS: '2000', ASYNC_CHAT_POLL_MS: '200', ASYNC_CHAT_CANCEL_CHECK_MS: '200' };

export interface ReadinessBody {
  ready: boolean;
  checks: Record<string, boolean>;
  degraded: string[];
}

export interface TestStack {
  mode: StackMode;
  /** Edge base URL including `/v1`, as SDK clients take it. */
  baseURL: string;
  accountId: string;
  /** Management key of an account with credit. */
  key: string;
  /** Management key of an account with no balance. */
  brokeKey: string;
  /** Management keys of the accounts asked for in `StackOptions.accounts`, by account id. */
  accountKeys: Record<string, string>;
  /** With `StackOptions.secondInference`: a second edge, in front of a second inference instance; with `replicas`, in front of the second set. */
  secondBaseURL?: string;
  /** With `StackOptions.replicas`: the second set's own ports. */
  secondInternal?: InternalAddresses;
  /** Base URL (with `/v1`) of the slow simulator serving the slow model, to call it the way the gateway does. */
  slowSimulatorURL: string;
  /** The bus the services use, to inject events the way a redelivery would. */
  bus: Bus;
  /** The platform identity secret every service of this stack shares (generated per stack). */
  identitySecret: string;
  /** The services' own ports, which only the edge should reach: HTTP base URLs (no `/v1`) and gRPC addresses. */
  internal: InternalAddresses;
  /** OpenAI SDK client on the edge with `key`; no retries, so every status reaches the test. */
  openai: OpenAI;
  /** Anthropic SDK client on the edge with `key` (the SDK appends /v1/messages and sends the key as x-api-key). */
  anthropic: Anthropic;
  /** `embedded` mode only: HTTP requests the simulator has received, to show a refused call never went upstream. */
  simulatorRequests?: () => number;
  /** HTTP requests the (fast) simulator has received, in either mode (asked over HTTP). */
  simulatorRequestCount(): Promise<number>;
  /** `processes` mode only: kill one service's process (SIGKILL: no graceful shutdown) and start a new one. */
  processes?: {
    kill(name: ServiceName, signal?: NodeJS.Signals): Promise<void>;
    /** Starts the service again (with `env` on top of its own, if given) and resolves once it is ready. */
    start(name: ServiceName, env?: Record<string, string>): Promise<void>;
    /** The service's `/readyz` answer (the edge's from its admin port). */
    readiness(name: ServiceName): Promise<{ status: number; body: ReadinessBody }>;
  };
  stop(): Promise<void>;
}

export interface InternalAddresses {
  inferenceURL: string;
  keysURL: string;
  billingURL: string;
  webhooksURL: string;
  edgeAdminURL: string;
  batchURL: string;
  mediaURL: string;
  keysGrpc: string;
  billingGrpc: string;
  inferenceGrpc: string;
}

export interface StackOptions {
  /** More seed accounts, each with a management key of its own (`TestStack.accountKeys`). */
  accounts?: { id: string; credit_usd: string; price_factor?: string }[];
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /** `processes` mode: a second inference process (with `env` on top of the stack's) and a second edge in front of it. */
  secondInference?: { env?: Record<string, string> };
  /** `processes` mode: a second batch process on the same engines (service name `batch-2`), working the same batches. */
  secondBatch?: boolean;
  /**
   * `processes` mode: two instances of every service (edge, keys, billing, inference, batch, media, webhooks) on
   * the same engines, the second ones named `<service>-2`. The second set calls only itself: the second edge
   * (`secondBaseURL`) forwards to the second services, which call each other. Not with `secondInference` or
   * `secondBatch` (it includes both).
   */
  replicas?: boolean;
  /** `processes` mode: how long every service may take to be ready (default 90 s). */
  readyTimeoutMs?: number;
}

const ROOT = path.resolve(__dirname, '../..');

const newKey = () => `sk-gw-v1-${randomBytes(24).toString('hex')}`;

function seeds(tag: string, extra: NonNullable<StackOptions['accounts']> = []) {
  const accountId = `acct_e2e_${tag}`;
  const key = newKey();
  const brokeKey = newKey();
  const accountKeys = Object.fromEntries(extra.map((a) => [a.id, newKey()]));
  const accounts = [
    { id: accountId, credit_usd: '10', management_key: key },
    { id: `acct_broke_${tag}`, credit_usd: '0', management_key: brokeKey },
    ...extra.map((a) => ({ ...a, management_key: accountKeys[a.id] })),
  ];
  return { accountId, key, brokeKey, accountKeys, json: JSON.stringify(accounts) };
}

/** The edge and the services of one stack, without the SDK clients. */
type StartedStack = Omit<TestStack, 'openai' | 'anthropic'>;

export async function startStack(mode: StackMode, opts: StackOptions = {}): Promise<TestStack> {
  if ((opts.secondInference || opts.replicas) && mode !== 'processes') throw new Error('second instances run in processes mode only');
  if (opts.replicas && (opts.secondInference || opts.secondBatch)) throw new Error('replicas already has a second inference and batch instance');
  const stack = mode === 'processes' ? await startProcesses(opts) : await startEmbedded(opts);
  return {
    ...stack,
    openai: new OpenAI({ apiKey: stack.key, baseURL: stack.baseURL, maxRetries: 0 }),
    anthropic: new Anthropic({ apiKey: stack.key, baseURL: stack.baseURL.replace(/\/v1$/, ''), maxRetries: 0 }),
  };
}

/**
 * A stack of `mode` for the enclosing describe block: started before its tests, stopped after them. The object
 * is filled in once beforeAll has run, so read its fields inside tests, not at describe time.
 */
export function useStack(mode: StackMode, opts: StackOptions = {}): TestStack {
  const stack = {} as TestStack;
  beforeAll(async () => {
    Object.assign(stack, await startStack(mode, opts));
  }, opts.replicas ? 300_000 : 120_000);
  afterAll(async () => {
    await stack.stop?.();
  }, 30_000);
  return stack;
}

/** The ports of the services, free right now. */
function internalAddresses(p: ServicePorts): InternalAddresses {
  return {
    inferenceURL: `http://127.0.0.1:${p.inferenceHttp}`,
    keysURL: `http://127.0.0.1:${p.keysHttp}`,
    billingURL: `http://127.0.0.1:${p.billingHttp}`,
    webhooksURL: `http://127.0.0.1:${p.webhooksHttp}`,
    edgeAdminURL: `http://127.0.0.1:${p.edgeAdmin}`,
    batchURL: `http://127.0.0.1:${p.batchHttp}`,
    mediaURL: `http://127.0.0.1:${p.mediaHttp}`,
    keysGrpc: `127.0.0.1:${p.keysGrpc}`,
    billingGrpc: `127.0.0.1:${p.billingGrpc}`,
    inferenceGrpc: `127.0.0.1:${p.inferenceGrpc}`,
  };
}

/** What the services get in either mode: seed accounts, catalogue, identity secret, async chat timings, and where each listens and calls. */
function serviceEnv(seedAccounts: string, catalogFile: string, p: ServicePorts, identitySecret: string): NodeJS.ProcessEnv {
  return {
    SEED_ACCOUNTS: seedAccounts,
    GATEWAY_IDENTITY_SECRET: identitySecret,
    CATALOG_FILE: catalogFile,
    ...ASYNC_CHAT_E2E_ENV,
    // Short, so a fault test sees the edge's stale window at work rather than its fresh cache.
    AUTH_CACHE_TTL_MS: '1000',
    // The sweeps run often, so every suite's stack runs their reads (an embedded stack's scan report checks them).
    SPEND_HOLD_SWEEP_MS: '1000',
    ARCHIVE_SWEEP_MS: '1000',
    ASYNC_CHAT_SWEEP_MS: '1000',
    IDEMPOTENT_CALL_SWEEP_MS: '1000',
    SIMULATOR_API_KEY: 'e2e-simulator-key',
    ...serviceAddressEnv(p),
  };
}

/** Every service as its own process on the real engines (MONGO_URL, KAFKA_BROKERS from the jest setup). */
async function startProcesses(opts: StackOptions): Promise<StartedStack> {
  const mongoUrl = process.env.MONGO_URL;
  const brokers = process.env.KAFKA_BROKERS;
  if (!mongoUrl || !brokers) throw new Error('MONGO_URL and KAFKA_BROKERS must be set (the jest global setup starts the engines)');
  const tag = randomBytes(4).toString('hex');
  const s = seeds(tag, opts.accounts);
  const logDir = mkdtempSync(path.join(tmpdir(), 'gw-e2e-logs-'));
  const [ports, sim, slowSim] = await Promise.all([freeServicePorts(), freePort(), freePort()]);
  const identitySecret = randomBytes(32).toString('hex');
  const dbUrl = new URL(mongoUrl);
  dbUrl.pathname = `/gw_e2e_${tag}`;
  const catalogFile = writeE2ECatalog(logDir, sim, slowSim);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LOG_LEVEL: 'info',
    STORE: 'mongo',
    MONGO_URL: dbUrl.toString(),
    BUS: 'kafka',
    KAFKA_BROKERS: brokers,
    // Stacks of parallel test files share the broker; each gets its own topics and consumer groups.
    BUS_NAMESPACE: `e2e-${tag}`,
    ...serviceEnv(s.json, catalogFile, ports, identitySecret),
    ...opts.env,
  };
  const children: ChildProcess[] = [];
  const byName = new Map<string, { child: ChildProcess; file: string; args: string[]; envOverrides: NodeJS.ProcessEnv }>();
  const run = (name: string, file: string, args: string[] = [], envOverrides: NodeJS.ProcessEnv = {}) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, file), ...args], { cwd: ROOT, env: { ...env, ...envOverrides }, stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    children.push(child);
    byName.set(name, { child, file, args, envOverrides });
  };
  // One simulator serves every provider format; a second one, slow, serves the async chat tests' model.
  run('simulator', 'packages/simulators/src/main.ts', ['--port', String(sim)]);
  run('slow-simulator', 'packages/simulators/src/main.ts', ['--port', String(slowSim), '--latency-ms', String(E2E_SLOW_LATENCY_MS)]);
  run('billing', 'services/billing/src/main.ts');
  run('keys', 'services/keys/src/main.ts');
  run('inference', 'services/inference/src/main.ts');
  run('batch', 'services/batch/src/main.ts');
  run('webhooks', 'services/webhooks/src/main.ts');
  run('media', 'services/media/src/main.ts');
  run('edge', 'services/edge/src/main.ts');
  const secondBatchHttp = opts.secondBatch ? await freePort() : null;
  if (secondBatchHttp !== null) run('batch-2', 'services/batch/src/main.ts', [], { BATCH_HTTP_PORT: String(secondBatchHttp) });
  const second = opts.secondInference ? await startSecondInference(run, opts.secondInference.env) : null;
  const replicaPorts = opts.replicas ? await freeServicePorts() : null;
  if (replicaPorts) {
    // The same environment on the second set's ports (the test's own env still on top).
    const replicaEnv = { ...serviceEnv(s.json, catalogFile, replicaPorts, identitySecret), ...opts.env };
    for (const name of ['billing', 'keys', 'inference', 'batch', 'webhooks', 'media', 'edge']) run(`${name}-2`, `services/${name}/src/main.ts`, [], replicaEnv);
  }
  const stopAll = async () => {
    await Promise.all(children.map((c) => new Promise<void>((resolve) => {
      if (c.exitCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
      setTimeout(() => c.kill('SIGKILL'), 8000).unref();
    })));
  };
  const readyUrl: Partial<Record<ServiceName, string>> = {
    billing: `http://127.0.0.1:${ports.billingHttp}/readyz`,
    batch: `http://127.0.0.1:${ports.batchHttp}/readyz`,
    ...(secondBatchHttp !== null ? { 'batch-2': `http://127.0.0.1:${secondBatchHttp}/readyz` } : {}),
    keys: `http://127.0.0.1:${ports.keysHttp}/readyz`,
    inference: `http://127.0.0.1:${ports.inferenceHttp}/readyz`,
    webhooks: `http://127.0.0.1:${ports.webhooksHttp}/readyz`,
    media: `http://127.0.0.1:${ports.mediaHttp}/readyz`,
    edge: `http://127.0.0.1:${ports.edgeAdmin}/readyz`,
    ...(replicaPorts ? replicaReadyUrls(replicaPorts) : {}),
  };
  const allReady = [...Object.values(readyUrl) as string[], ...(second?.readyUrls ?? [])];
  try {
    // Settled, not just ready: a test must not act before the consumers it relies on have joined.
    // Twice the processes start twice as slowly on a small machine.
    await waitFor('services ready', async () => (await Promise.all(allReady.map(httpSettled))).every(Boolean), opts.readyTimeoutMs ?? (opts.replicas ? 240_000 : 90_000));
  } catch (err) {
    await stopAll();
    throw new Error(`${(err as Error).message}\n${tails(logDir)}`);
  }
  const bus = createBus({ engine: 'kafka', brokers: brokers.split(','), clientId: `e2e-${tag}`, namespace: `e2e-${tag}` }, createLogger('e2e-bus', 'warn'));
  return {
    mode: 'processes',
    baseURL: `http://127.0.0.1:${ports.edge}/v1`,
    slowSimulatorURL: `http://127.0.0.1:${slowSim}/v1`,
    accountId: s.accountId,
    key: s.key,
    brokeKey: s.brokeKey,
    accountKeys: s.accountKeys,
    secondBaseURL: second?.baseURL ?? (replicaPorts ? `http://127.0.0.1:${replicaPorts.edge}/v1` : undefined),
    secondInternal: replicaPorts ? internalAddresses(replicaPorts) : undefined,
    simulatorRequestCount: () => requestCount(`http://127.0.0.1:${sim}`),
    bus,
    identitySecret,
    internal: internalAddresses(ports),
    processes: {
      kill: async (name, signal = 'SIGKILL') => {
        const { child } = byName.get(name)!;
        if (child.exitCode !== null || child.signalCode !== null) return;
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill(signal);
        });
        // Gone for good: stop() must not wait for its exit again.
        children.splice(children.indexOf(child), 1);
      },
      start: async (name, env = {}) => {
        const { file, args, envOverrides } = byName.get(name)!;
        run(name, file, args, { ...envOverrides, ...env });
        await waitFor(`${name} ready again`, () => httpOk(readyUrl[name]!), 60_000);
      },
      readiness: async (name) => {
        const res = await fetch(readyUrl[name]!);
        return { status: res.status, body: (await res.json()) as ReadinessBody };
      },
    },
    stop: async () => {
      await bus.close();
      await stopAll();
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

/** A second inference process on the same engines, and a second edge that forwards to it only. */
async function startSecondInference(run: (name: string, file: string, args: string[], env: NodeJS.ProcessEnv) => void, env: Record<string, string> = {}) {
  const [inferenceHttp, inferenceGrpc, edge, edgeAdmin] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  run('inference-2', 'services/inference/src/main.ts', [], { ...env, INFERENCE_HTTP_PORT: String(inferenceHttp), INFERENCE_GRPC_PORT: String(inferenceGrpc) });
  run('edge-2', 'services/edge/src/main.ts', [], { EDGE_PORT: String(edge), EDGE_ADMIN_PORT: String(edgeAdmin), INFERENCE_HTTP_URL: `http://127.0.0.1:${inferenceHttp}` });
  return {
    baseURL: `http://127.0.0.1:${edge}/v1`,
    readyUrls: [`http://127.0.0.1:${inferenceHttp}/readyz`, `http://127.0.0.1:${edgeAdmin}/readyz`],
  };
}

function replicaReadyUrls(p: ServicePorts): Partial<Record<ServiceName, string>> {
  const url = (port: number) => `http://127.0.0.1:${port}/readyz`;
  return {
    'billing-2': url(p.billingHttp), 'keys-2': url(p.keysHttp), 'inference-2': url(p.inferenceHttp), 'batch-2': url(p.batchHttp),
    'webhooks-2': url(p.webhooksHttp), 'media-2': url(p.mediaHttp), 'edge-2': url(p.edgeAdmin),
  };
}

/** The single-process embedded mode, as `scripts/start.sh` runs it, on a temp data dir. */
async function startEmbedded(opts: StackOptions): Promise<StartedStack> {
  const tag = randomBytes(4).toString('hex');
  const s = seeds(tag, opts.accounts);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-e2e-data-'));
  const sim = await startSimulators({ port: 0 });
  const slowSim = await startSimulators({ port: 0, latencyMs: E2E_SLOW_LATENCY_MS });
  const ports = await freeServicePorts();
  const identitySecret = randomBytes(32).toString('hex');
  // Every filtered read the stack's stores answer by scanning a whole collection lands here; stop() fails on any.
  const scanReportFile = path.join(dataDir, 'unindexed-reads.jsonl');
  const env = { ...serviceEnv(s.json, writeE2ECatalog(dataDir, sim.port, slowSim.port), ports, identitySecret), STORE_SCAN_REPORT_FILE: scanReportFile, ...opts.env };
  const stack = await startLocalStack({ dataDir, env, logger: createLogger(null, 'warn') });
  await waitFor('consumers joined', async () => (await Promise.all(stack.services.map((svc) => svc.health.report()))).every((r) => r.ready && r.degraded.length === 0), 30_000);
  return {
    mode: 'embedded',
    baseURL: `http://127.0.0.1:${stack.edge.httpPort}/v1`,
    slowSimulatorURL: `http://127.0.0.1:${slowSim.port}/v1`,
    accountId: s.accountId,
    key: s.key,
    brokeKey: s.brokeKey,
    accountKeys: s.accountKeys,
    bus: stack.bus,
    simulatorRequests: () => sim.requests,
    simulatorRequestCount: () => requestCount(sim.url),
    identitySecret,
    internal: internalAddresses(ports),
    stop: async () => {
      await stack.stop();
      await sim.close();
      await slowSim.close();
      const scans = existsSync(scanReportFile) ? readFileSync(scanReportFile, 'utf8').trim().split('\n') : [];
      rmSync(dataDir, { recursive: true, force: true });
      if (scans.length > 0) throw new Error(`The stack ran ${scans.length} filtered read(s) that scan a whole collection (no index serves them):\n${scans.join('\n')}`);
    },
  };
}

async function requestCount(simulatorURL: string): Promise<number> {
  const res = await fetch(`${simulatorURL}${REQUEST_COUNT_PATH}`);
  return ((await res.json()) as { requests: number }).requests;
}

function tails(dir: string): string {
  return readdirSync(dir).filter((f) => f.endsWith('.log')).map((f) => {
    const lines = readFileSync(path.join(dir, f), 'utf8').trim().split('\n');
    return `--- ${f.replace(/\.log$/, '')} ---\n${lines.slice(-15).join('\n')}`;
  }).join('\n');
}
