/**
 * What the benchmarks run, compiled to JavaScript first by deploy/docker/build-service.sh (the images' build, which
 * scripts/start.sh runs too), so a figure is of what ships and not of tsx compiling at run time.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './children';

const builds = new Map<string, Promise<string>>();

/**
 * `target` (a folder under services/, or `gateway`: every service in one process) of the checkout at `root`,
 * compiled by this checkout's build script (an older checkout's may not know the target) with further entry files
 * beside it; once per checkout, target, entries and run. Resolves to the build folder, which mirrors the
 * repository (`main.js` starts the target).
 */
export function compiledBuild(root: string, tempDir: string, target: string, entries: string[] = []): Promise<string> {
  const key = [root, target, ...entries].join('\0');
  let build = builds.get(key);
  if (!build) {
    const out = path.join(tempDir, `${target}-build-${builds.size + 1}`);
    process.stdout.write(`compiling ${target} of ${root}${entries.length ? ` (with ${entries.join(', ')})` : ''} into ${out}\n`);
    build = promisify(execFile)('bash', [path.join(ROOT, 'deploy/docker/build-service.sh'), target, out, ...entries], {
      env: { ...process.env, GW_BUILD_ROOT: root }, maxBuffer: 16 * 1024 * 1024,
    }).then(() => out, (err: { stdout?: string; stderr?: string; message: string }) => {
      // tsc reports type errors on stdout.
      throw new Error(`compiling ${target} of ${root} failed: ${[err.stderr, err.stdout].filter(Boolean).join('\n') || err.message}`);
    });
    builds.set(key, build);
  }
  return build;
}

/** The single-process gateway of `root` with a benchmark's entry file beside it; resolves to the compiled entry. */
export async function compiledGateway(root: string, tempDir: string, entry = 'bench/gateway-process.ts'): Promise<string> {
  return path.join(await compiledBuild(root, tempDir, 'gateway', [entry]), entry.replace(/\.ts$/, '.js'));
}
