/** What every load benchmark sets up first: a time budget, a temp dir, the seed key, the catalogue and the simulator. */
import { mkdtempSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ROOT, cleanup, logTails, setTempDir, startChild, type Child } from './children';
import { HOST, freePorts } from './net';
import { writeCatalog } from './setup';

export interface BenchRun {
  startedAt: Date;
  loadBefore: number[];
  /** A `gw-bench-` dir, removed by cleanup (and by an orphaned gateway). */
  tempDir: string;
  simPort: number;
  /** The management key of the seeded account, which the load calls with. */
  benchKey: string;
  /** The environment every child gets. */
  baseEnv: NodeJS.ProcessEnv;
  catalogFile: string;
  /** Ends the time budget (the run finished within it). */
  clearBudget(): void;
}

/** Past `budgetS` seconds everything is stopped and the process exits 1: a hung run must not hold the machine. */
export async function prepareRun(what: string, budgetS: number): Promise<BenchRun> {
  const budget = setTimeout(() => {
    process.stderr.write(`\n${what} exceeded its time budget of ${budgetS} s; stopping everything\n${logTails()}\n`);
    cleanup().finally(() => process.exit(1));
  }, budgetS * 1000);
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-bench-'));
  setTempDir(tempDir);
  const [simPort] = await freePorts(1);
  return {
    startedAt, loadBefore, tempDir, simPort,
    benchKey: `sk-gw-v1-${randomBytes(24).toString('hex')}`,
    baseEnv: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    catalogFile: writeCatalog(tempDir, simPort),
    clearBudget: () => clearTimeout(budget),
  };
}

/** Node's arguments for the provider simulators on `port` (loopback), a child that stops when its parent dies. */
export function simulatorArgs(port: number): string[] {
  return ['--import', 'tsx', '--import', path.join(ROOT, 'bench/exit-with-parent.ts'),
    path.join(ROOT, 'packages/simulators/src/main.ts'), '--port', String(port), '--host', HOST];
}

/** The OpenAI-format simulator (and the others it serves) as a child on loopback. */
export function startSimulator(run: BenchRun): Child {
  return startChild('simulator', simulatorArgs(run.simPort), run.baseEnv, true);
}
