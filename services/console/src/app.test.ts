import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createLogger, IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { startConsoleService } from './app';

const SECRET = 'console-test-identity-secret-of-at-least-32-bytes';
const logger = createLogger('console-test', process.env.TEST_LOG_LEVEL ?? 'silent');
const signer = new IdentitySigner(SECRET, 'edge');

describe('console static service', () => {
  let dir: string;
  let svc: RunningService;
  const base = () => `http://127.0.0.1:${svc.httpPort}`;
  /** As the edge forwards a page load: an identity token bound to the request, no account (no key needed). */
  const get = (p: string, signed = true) => fetch(`${base()}${p}`, { headers: signed ? { [IDENTITY_HEADER]: signer.mint({ method: 'GET', path: p }, null, 'trace-console') } : {} });

  let tempRoot: string;
  beforeAll(async () => {
    tempRoot = mkdtempSync(path.join(tmpdir(), 'gw-console-test-'));
    // Under a dot-folder, as in the compiled gateway (.cache/gateway/services/console/dist).
    dir = path.join(tempRoot, '.cache', 'dist');
    mkdirSync(path.join(dir, 'assets'), { recursive: true });
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>console</title><script type="module" src="/console/assets/app-1.js"></script>');
    writeFileSync(path.join(dir, 'assets', 'app-1.js'), 'console.info("app")');
    svc = await startConsoleService({ config: { CONSOLE_HTTP_PORT: 0, CONSOLE_STATIC_DIR: dir, GATEWAY_IDENTITY_SECRET: SECRET, BIND_HOST: '127.0.0.1' }, logger });
  });
  afterAll(async () => {
    await svc?.stop();
    rmSync(tempRoot, { recursive: true, force: true });
  });

  it('answers every console page with the app, never cached, under a same-origin content security policy', async () => {
    for (const p of ['/console', '/console/', '/console/keys', '/console/webhooks']) {
      const res = await get(p);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
      expect(await res.text()).toContain('/console/assets/app-1.js');
    }
  });

  it('serves hashed assets cached for good; an unknown asset is a 404, not the page', async () => {
    const asset = await get('/console/assets/app-1.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await get('/console/assets/app-2.js')).status).toBe(404);
    // A path leaving the assets folder is refused outright.
    expect((await get('/console/assets/..%2f..%2findex.html')).status).toBe(403);
  });

  it('refuses a request that did not come through the edge', async () => {
    expect((await get('/console/keys', false)).status).toBe(401);
  });

  it('serves nothing outside /console', async () => {
    expect((await get('/index.html')).status).toBe(404);
  });

  it('is ready only when the build is there', async () => {
    expect((await fetch(`${base()}/readyz`)).status).toBe(200);
    const empty = mkdtempSync(path.join(tmpdir(), 'gw-console-empty-'));
    const unbuilt = await startConsoleService({ config: { CONSOLE_HTTP_PORT: 0, CONSOLE_STATIC_DIR: empty, GATEWAY_IDENTITY_SECRET: SECRET, BIND_HOST: '127.0.0.1' }, logger });
    try {
      const res = await fetch(`http://127.0.0.1:${unbuilt.httpPort}/readyz`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { checks: unknown }).checks).toEqual({ build: false });
    } finally {
      await unbuilt.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
