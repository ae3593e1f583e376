import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

export interface FuzzFailure {
  check: 'server_error' | 'not_envelope';
  method: string;
  path: string;
  url: string;
  status: number;
  body: string;
}

export interface FuzzRun {
  /** Requests the edge answered meanwhile (its own count, not schemathesis'). */
  requests: number;
  failures: FuzzFailure[];
  seconds: number;
  seed: number;
  /** Stopped by the drill once `minRequests` were sent (else it ended by itself or at `maxSeconds`). */
  stoppedAtTarget: boolean;
  exitCode: number | null;
  /** The last lines of schemathesis' output (its summary), for the drill's log. */
  summary: string;
}

export interface FuzzOptions {
  schemaUrl: string;
  key: string;
  /** Stop once the edge has answered this many requests... */
  minRequests: number;
  /** ...or after this long, whichever comes first. */
  maxSeconds: number;
  /** The edge's count of answered requests (its /metrics). */
  countRequests: () => Promise<number>;
  seed: number;
}

/** The schemathesis the project installs (scripts/python-tools.sh, into .cache/python-tools). */
function schemathesisBin(): string {
  const r = spawnSync('bash', [path.join(ROOT, 'scripts/python-tools.sh'), '--print-env'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/python-tools.sh failed:\n${r.stderr}`);
  const bin = /^SCHEMATHESIS=(.+)$/m.exec(r.stdout)?.[1];
  if (!bin || !existsSync(bin)) throw new Error(`scripts/python-tools.sh named no schemathesis: ${r.stdout}`);
  return bin;
}

/**
 * Schemathesis against the served OpenAPI document, with the drill's own checks (gateway_checks.py: no 5xx
 * but the spec's 501, every error in the envelope): examples, coverage and fuzzing phases, 4 workers, no
 * shrinking (a failure is reported as found; its request is in the failures file). Fuzzing repeats until
 * the edge has answered `minRequests` or `maxSeconds` have passed.
 */
export async function runSchemathesis(opts: FuzzOptions): Promise<FuzzRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-drill-fuzz-'));
  const failuresFile = path.join(dir, 'failures.jsonl');
  const started = Date.now();
  const before = await opts.countRequests();
  const child = spawn(schemathesisBin(), [
    'run', opts.schemaUrl,
    '--header', `Authorization: Bearer ${opts.key}`,
    '--checks', 'gateway_no_server_error,gateway_error_envelope',
    '--phases', 'examples,coverage,fuzzing',
    '--max-examples', '100',
    '--workers', '4',
    '--max-time', String(opts.maxSeconds),
    '--request-timeout', '30',
    '--no-shrink',
    '--suppress-health-check', 'all',
    '--generation-database', 'none',
    '--seed', String(opts.seed),
    '--no-color',
  ], {
    cwd: dir,
    env: { ...process.env, PYTHONPATH: __dirname, PYTHONDONTWRITEBYTECODE: '1', SCHEMATHESIS_HOOKS: 'gateway_checks', GW_FUZZ_FAILURES: failuresFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-20_000); });
  child.stderr.on('data', (d: Buffer) => { output = (output + d.toString()).slice(-20_000); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stoppedAtTarget = false;
  const watch = setInterval(() => {
    void opts.countRequests().then((n) => {
      if (n - before >= opts.minRequests && child.exitCode === null && !stoppedAtTarget) {
        stoppedAtTarget = true;
        child.kill('SIGINT');
      }
    }, () => undefined);
  }, 1_000);
  // schemathesis stops itself at --max-time; past that (and a margin to write its summary) it is killed.
  const hardStop = setTimeout(() => child.kill('SIGKILL'), (opts.maxSeconds + 30) * 1000);
  const exitCode = await exited;
  clearInterval(watch);
  clearTimeout(hardStop);
  const requests = (await opts.countRequests()) - before;
  const failures = existsSync(failuresFile) ? readFileSync(failuresFile, 'utf8').split('\n').filter(Boolean).map(failureOf) : [];
  rmSync(dir, { recursive: true, force: true });
  return {
    requests, failures, seconds: Math.round((Date.now() - started) / 1000), seed: opts.seed, stoppedAtTarget, exitCode,
    summary: output.split('\n').slice(-30).join('\n'),
  };
}

/** A line of the failures file (written by gateway_checks.py); one cut short still counts, as what it says. */
function failureOf(line: string): FuzzFailure {
  try {
    return JSON.parse(line) as FuzzFailure;
  } catch {
    return { check: 'server_error', method: '?', path: '?', url: '?', status: 0, body: line };
  }
}
