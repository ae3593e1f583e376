/**
 * Top self-time functions and files of a V8 `.cpuprofile` (as written by `node --cpu-prof`, e.g. by
 * `chat-overhead.ts --profile-gateway DIR`).
 *
 *   node --import tsx bench/profile-summary.ts DIR-or-file.cpuprofile [--top 25] [--from S] [--to S]
 *
 * `--from` / `--to` keep only the samples taken in that window (seconds since the profile started), so
 * start-up (module loading, transpiling) does not blur the steady state of a measured run.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

const ROOT = path.resolve(__dirname, '..');

function shortUrl(url: string): string {
  if (!url) return '(native)';
  let p = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const nm = p.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = p.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}: ${rest.slice(2).join('/')}` : `${rest[0]}: ${rest.slice(1).join('/')}`;
  }
  if (p.startsWith(ROOT + '/')) return p.slice(ROOT.length + 1);
  // A compiled gateway (bench/lib/gateway.ts, scripts/build-gateway.sh) keeps the repository's layout below its build folder.
  const built = /\/((?:services|packages)\/[^/]+\/(?:src|dist)\/.*)$/.exec(p);
  return built ? built[1] : p;
}

/** Package (node_modules name), repo package (services/x, packages/y) or node builtin. */
function owner(url: string): string {
  if (!url) return '(native / VM)';
  if (url.startsWith('node:')) return 'node (builtin)';
  const s = shortUrl(url);
  const colon = s.indexOf(': ');
  if (colon >= 0) return s.slice(0, colon);
  const m = /^(services|packages|bench)\/[^/]+/.exec(s);
  return m ? m[0] : s;
}

/** Line numbers of .ts files are those of tsx's transformed output, not of the source: left out. */
function lineOf(f: CallFrame): string {
  return f.url && !/\.tsx?$/.test(f.url) ? `:${f.lineNumber + 1}` : '';
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: {
    top: { type: 'string', default: '25' }, from: { type: 'string', default: '0' }, to: { type: 'string', default: 'Infinity' },
  } });
  const top = Number(values.top);
  const fromUs = Number(values.from) * 1e6;
  const toUs = Number(values.to) * 1e6;
  if (!(fromUs >= 0) || !(toUs > fromUs)) throw new Error('--from and --to are seconds since the profile started, --from < --to');
  const target = positionals[0];
  if (!target) throw new Error('usage: profile-summary.ts <dir|file.cpuprofile> [--top N]');
  const files = statSync(target).isDirectory()
    ? readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(target, f))
    : [target];
  for (const file of files) {
    const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    const selfUs = new Map<number, number>();
    let at = 0;
    for (let i = 0; i < prof.samples.length; i++) {
      const dt = prof.timeDeltas[i] ?? 0;
      at += dt;
      if (at < fromUs || at > toUs) continue;
      selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + dt);
    }
    const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
    const idle = [...selfUs.entries()].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((a, [, v]) => a + v, 0);
    const busy = total - idle;

    const parent = new Map<number, number>();
    for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const isRepo = (url: string) => /^(services|packages)\//.test(shortUrl(url));
    const label = (f: CallFrame) => `${f.functionName || '(anonymous)'}  ${shortUrl(f.url)}${lineOf(f)}`;
    // Every sample charged to the nearest function of this repository on its stack: which of our code
    // paths the time (in libraries, node internals, GC excluded) is spent under.
    const nearestRepo = new Map<string, number>();
    const fns = new Map<string, number>();
    const owners = new Map<string, number>();
    for (const [id, us] of selfUs) {
      const f = byId.get(id)!.callFrame;
      if (f.functionName === '(idle)') continue;
      const key = label(f);
      fns.set(key, (fns.get(key) ?? 0) + us);
      const o = owner(f.url);
      owners.set(o, (owners.get(o) ?? 0) + us);
      let frame: number | undefined = id;
      while (frame !== undefined && !isRepo(byId.get(frame)!.callFrame.url)) frame = parent.get(frame);
      const r = frame === undefined ? '(no repository frame: GC, idle loop, library timers, I/O callbacks)' : label(byId.get(frame)!.callFrame);
      nearestRepo.set(r, (nearestRepo.get(r) ?? 0) + us);
    }
    const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
    const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
    process.stdout.write(`\n${file}\n  profiled ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (${((busy / total) * 100).toFixed(0)}%); percentages are of busy time\n`);
    process.stdout.write(`\n  top self time by function:\n`);
    for (const [k, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${ms(us)} ${pct(us)}  ${k}\n`);
    process.stdout.write(`\n  self time by package / module:\n`);
    for (const [k, us] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${ms(us)} ${pct(us)}  ${k}\n`);
    process.stdout.write(`\n  time under the nearest repository function on the stack (services/, packages/):\n`);
    for (const [k, us] of [...nearestRepo].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${ms(us)} ${pct(us)}  ${k}\n`);
  }
}

process.stdout.on('error', (err: NodeJS.ErrnoException) => { if (err.code === 'EPIPE') process.exit(0); throw err; });
main();
