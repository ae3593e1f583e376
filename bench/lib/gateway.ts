/**
 * The gateway under test: `bench/gateway-process.ts` of a checkout, every service on a free port, with embedded
 * engines, compiled to JavaScript first as scripts/start.sh runs it (deploy/docker/build-service.sh gateway).
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { compiledGateway } from './build';
import { ROOT, alive, forgetChild, startChild, type Child } from './children';
import { HOST, getStatus, waitFor } from './net';
import { servicePorts } from './soak-stacks';

export interface GatewayOptions {
  /** Shown in logs and errors. */
  name: string;
  /** The checkout whose code runs (this one unless given): its `bench/gateway-process.ts` and services, compiled. */
  root?: string;
  /** The benchmark's temp dir (a `gw-bench-` dir, which an orphaned gateway removes): each attempt's data dir is in it. */
  tempDir: string;
  /** The data dirs' name before the attempt's number (default `data`). */
  dataPrefix?: string;
  /** The environment every child gets (PATH, HOME, log level). */
  baseEnv: NodeJS.ProcessEnv;
  /** The seeded account's management key, which the load calls with. */
  benchKey: string;
  catalogFile: string;
  simulatorKey: string;
  /** Node flags before the script (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  /** Variables added last (settings being compared). */
  extraEnv?: Record<string, string>;
  /** Children whose death ends the wait for readiness. */
  watch?: Child[];
}

export interface BenchGateway {
  child: Child;
  edgePort: number;
}

/** Starts the gateway and waits until its edge is ready; once more on other ports if one was taken meanwhile. */
export async function startBenchGateway(o: GatewayOptions): Promise<BenchGateway> {
  const root = o.root ?? ROOT;
  const entry = await compiledGateway(root, o.tempDir);
  for (let attempt = 1; ; attempt++) {
    const ports = await servicePorts();
    const dataDir = path.join(o.tempDir, `${o.dataPrefix ?? 'data'}-${attempt}`);
    mkdirSync(dataDir, { recursive: true });
    const env: NodeJS.ProcessEnv = {
      ...o.baseEnv,
      DATA_DIR: dataDir,
      BENCH_TEMP_DIR: o.tempDir,
      STORE: 'embedded',
      BUS: 'embedded',
      SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_bench', credit_usd: '1000000', management_key: o.benchKey }]),
      CATALOG_FILE: o.catalogFile,
      SIMULATOR_API_KEY: o.simulatorKey,
      ...ports,
      ...o.extraEnv,
    };
    const label = attempt === 1 ? o.name : `${o.name} (attempt ${attempt})`;
    const candidate = startChild(label, [...(o.nodeArgs ?? []), entry], env, true, root);
    try {
      await waitFor(`${o.name} (edge admin /readyz)`, async () => (await getStatus(`http://${HOST}:${ports.EDGE_ADMIN_PORT}/readyz`)) === 200, 120_000, [candidate, ...(o.watch ?? [])]);
      return { child: candidate, edgePort: Number(ports.EDGE_PORT) };
    } catch (err) {
      // A port taken between the check and the listen: once more on other ports.
      if (attempt >= 3 || alive(candidate) || !candidate.tail.some((l) => l.includes('EADDRINUSE'))) throw err;
      process.stdout.write(`${o.name} start hit a port in use; retrying on other ports\n`);
      forgetChild(candidate);
    }
  }
}
