import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort, waitFor } from '../../../test-e2e/harness/ports';
import { freeServicePorts, serviceAddressEnv } from '../../../test-e2e/harness/service-ports';
import { ROOT } from './manifests';

/**
 * The image build of deploy/docker/Dockerfile without docker: its build stage is deploy/docker/build-service.sh,
 * run here on the edge (and the provider simulators) into a temporary directory; the result is started with plain
 * `node main.js`, as the image's entry point does, and must answer and stop cleanly on SIGTERM.
 */

const SERVICE = 'edge';
let out: string;
let dataDir: string;
/** Where pnpm deploy also links bins: the repository joined with the build's temporary path (`$ROOT/tmp/...`). */
const strayBase = path.join(ROOT, os.tmpdir());
const strayEntries = () => (fs.existsSync(strayBase) ? fs.readdirSync(strayBase) : []);
let strayBefore: string[];

beforeAll(() => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-image-'));
  out = path.join(base, 'app');
  dataDir = path.join(base, 'data');
  strayBefore = strayEntries();
  execFileSync('bash', [path.join(ROOT, 'deploy/docker/build-service.sh'), SERVICE, out], { stdio: ['ignore', 'ignore', 'pipe'] });
}, 300_000);

// Before, every build (so every start of scripts/start.sh after a change) left a tmp/tmp.XXXX/deploy in the repository.
test('the build leaves nothing behind in the repository', () => {
  expect(strayEntries()).toEqual(strayBefore);
});

afterAll(() => {
  if (out) fs.rmSync(path.dirname(out), { recursive: true, force: true });
});

/** The build's own files under `dir` (dependencies nested in a package's node_modules left out). */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : filesUnder(full);
    return [path.relative(out, full)];
  });
}

/** The version of `dependency` Node loads for code in `dir` of a build rooted at `root`: the nearest node_modules up. */
function versionSeenFrom(root: string, dir: string, dependency: string): string | null {
  for (let at = dir; at.startsWith(root); at = path.dirname(at)) {
    const manifest = path.join(at, 'node_modules', dependency, 'package.json');
    if (fs.existsSync(manifest)) return JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
  }
  return null;
}

/**
 * Each compiled workspace package against the versions its package.json pins: a flat tree holds one version per
 * name at its top, and a package that pins another must still load its own (it did not: net-guard ran with
 * express's ipaddr.js 1.9.1, whose special ranges differ, and platform with another OpenTelemetry).
 */
function pinnedVersionsOff(root: string): string[] {
  const off: string[] = [];
  for (const group of ['packages', 'services']) {
    if (!fs.existsSync(path.join(root, group))) continue;
    for (const name of fs.readdirSync(path.join(root, group))) {
      const dir = path.join(root, group, name);
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      for (const [dependency, pinned] of Object.entries<string>(pkg.dependencies ?? {})) {
        if (!/^\d+\.\d+\.\d+$/.test(pinned)) continue;
        const seen = versionSeenFrom(root, path.join(dir, 'src'), dependency);
        if (seen !== pinned) off.push(`${group}/${name}: ${dependency} ${seen ?? 'missing'}, pinned ${pinned}`);
      }
    }
  }
  return off;
}

test('the build holds compiled JavaScript only, and production dependencies only', () => {
  const code = [...filesUnder(path.join(out, 'services')), ...filesUnder(path.join(out, 'packages'))];
  expect(code).toContain(`services/${SERVICE}/src/main.js`);
  expect(code.filter((f) => f.endsWith('.ts'))).toEqual([]);
  expect(code.filter((f) => /\.test\.js$/.test(f))).toEqual([]);
  const modules = fs.readdirSync(path.join(out, 'node_modules'));
  expect(modules.filter((m) => ['typescript', 'tsx', 'jest', '@swc', '@types/jest', 'testcontainers', 'esbuild'].includes(m))).toEqual([]);
  // Every workspace package the service needs is the compiled one (its main is JavaScript).
  for (const name of fs.readdirSync(path.join(out, 'node_modules/@gw'))) {
    const pkg = JSON.parse(fs.readFileSync(path.join(out, 'node_modules/@gw', name, 'package.json'), 'utf8'));
    expect([name, pkg.main]).toEqual([name, 'src/index.js']);
  }
  expect(pinnedVersionsOff(out)).toEqual([]);
});

describe('node main.js', () => {
  let child: ChildProcess | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  test('starts the service, which answers /livez and /readyz on its admin port and stops on SIGTERM', async () => {
    const [port, adminPort, closedPort] = [await freePort(), await freePort(), await freePort()];
    let output = '';
    child = spawn(process.execPath, ['main.js'], {
      cwd: out,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        EDGE_PORT: String(port),
        EDGE_HOST: '127.0.0.1',
        EDGE_ADMIN_PORT: String(adminPort),
        DATA_DIR: dataDir,
        GATEWAY_IDENTITY_SECRET: 'image-build-test-identity-secret-0123456789',
        LOG_LEVEL: 'info',
        // A port nothing listens on: the keys service of a gateway running on this machine must not answer.
        KEYS_GRPC_ADDR: `127.0.0.1:${closedPort}`,
        KEYS_HTTP_URL: `http://127.0.0.1:${closedPort}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => { output += String(d); });
    child.stderr?.on('data', (d) => { output += String(d); });
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    await waitFor(`/livez of the compiled ${SERVICE} (output so far: ${output})`, async () => (await fetch(`http://127.0.0.1:${adminPort}/livez`)).ok, 60_000);
    // Not ready: no keys service runs here, and the edge says so instead of serving.
    const ready = await fetch(`http://127.0.0.1:${adminPort}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('"msg":"stopped"');
  }, 90_000);
});

describe('the provider simulators, built the same way (SERVICE=simulators)', () => {
  let sim: string;
  beforeAll(() => {
    sim = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-image-sim-')), 'app');
    execFileSync('bash', [path.join(ROOT, 'deploy/docker/build-service.sh'), 'simulators', sim], { stdio: ['ignore', 'ignore', 'pipe'] });
  }, 300_000);
  afterAll(() => {
    if (sim) fs.rmSync(path.dirname(sim), { recursive: true, force: true });
  });

  test('node main.js --port <p> --host 127.0.0.1 serves the OpenAI models list', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['main.js', '--port', String(port), '--host', '127.0.0.1'], { cwd: sim, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor('the compiled simulators', async () => (await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { authorization: 'Bearer test' } })).ok, 60_000);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 90_000);
});

describe('the single-process gateway, built the same way (SERVICE=gateway, what scripts/start.sh runs)', () => {
  let gateway: string;
  beforeAll(() => {
    // Inside a dot-folder, as scripts/build-gateway.sh puts it (.cache/gateway).
    gateway = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-image-gateway-')), '.cache', 'gateway');
    execFileSync('bash', [path.join(ROOT, 'deploy/docker/build-service.sh'), 'gateway', gateway], { stdio: ['ignore', 'ignore', 'pipe'] });
  }, 300_000);
  afterAll(() => {
    if (gateway) fs.rmSync(path.dirname(path.dirname(gateway)), { recursive: true, force: true });
  });

  test('every compiled package loads the dependency versions it pins', () => {
    expect(pinnedVersionsOff(gateway)).toEqual([]);
  });

  test('node main.js answers a chat call on the simulated model, bills it, serves the console, and stops on SIGTERM', async () => {
    const [ports, simulatorPort] = await Promise.all([freeServicePorts(), freePort()]);
    const work = path.dirname(path.dirname(gateway));
    // The default catalogue, its simulated models routed to this test's simulator port instead of 4010.
    const catalogFile = path.join(work, 'catalog.json');
    fs.writeFileSync(catalogFile, fs.readFileSync(path.join(ROOT, 'config/catalog.json'), 'utf8').replaceAll('127.0.0.1:4010/', `127.0.0.1:${simulatorPort}/`));
    let output = '';
    const child = spawn(process.execPath, ['main.js'], {
      cwd: gateway,
      env: {
        PATH: process.env.PATH, NODE_ENV: 'production', LOG_LEVEL: 'warn', DATA_DIR: path.join(work, 'data'), CATALOG_FILE: catalogFile,
        SIMULATOR_PORT: String(simulatorPort), ...serviceAddressEnv(ports),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => { output += String(d); });
    child.stderr?.on('data', (d) => { output += String(d); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor('the compiled gateway to be ready', async () => output.includes('Gateway ready on'), 90_000)
        .catch((err: Error) => { throw new Error(`${err.message}; its output:\n${output}`); });
      const key = /sk-gw-v1-[0-9a-f]+/.exec(output)?.[0];
      expect(key).toBeDefined();
      const edge = `http://127.0.0.1:${ports.edge}`;
      const chat = await fetch(`${edge}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'simulated/echo-chat', messages: [{ role: 'user', content: 'hello compiled gateway' }] }),
      });
      expect(chat.status).toBe(200);
      const completion = await chat.json() as { choices: { message: { content: string } }[] };
      expect(completion.choices[0].message.content).toContain('hello compiled gateway');
      const requestId = chat.headers.get('x-request-id');
      let billed: { data?: { status?: string } } = {};
      await waitFor('the call to be billed', async () => {
        const res = await fetch(`${edge}/v1/billing/requests/${requestId}`, { headers: { authorization: `Bearer ${key}` } });
        billed = res.ok ? await res.json() as typeof billed : {};
        return billed.data?.status === 'succeeded';
      }, 30_000);
      const consolePage = await fetch(`${edge}/console/`);
      expect(consolePage.status).toBe(200);
      expect(await consolePage.text()).toContain('<script');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 180_000);
});
