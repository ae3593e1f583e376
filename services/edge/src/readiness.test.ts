import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus, type Bus } from '@gw/bus';
import { createLogger, Health, startGrpcServer, type GrpcServerHandle } from '@gw/platform';
import { createStore, type Store } from '@gw/store';
import { startEdge, type RunningEdge } from './app';
import { edgeConfigSchema } from './config';

const logger = createLogger('edge-readiness-test', process.env.TEST_LOG_LEVEL ?? 'silent');

/** The edge's readiness follows what it needs to serve: the keys service answering, not the bus. */
describe('edge readiness', () => {
  let dir: string;
  let store: Store;
  let realBus: Bus;
  const state = { keysStore: true, bus: true };
  let keys: GrpcServerHandle;
  let edge: RunningEdge;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gw-edge-ready-'));
    store = createStore({ engine: 'embedded', dataDir: dir });
    realBus = createBus({ engine: 'embedded', store, pollMs: 50 }, logger);
    // The keys service's own health: NOT_SERVING while its store is away, as the real one reports.
    const keysHealth = new Health().addCheck('store', async () => state.keysStore);
    keys = await startGrpcServer('127.0.0.1:0', (s) => keysHealth.register(s));
    edge = await startEdge({
      config: edgeConfigSchema.parse({ EDGE_PORT: '0', EDGE_ADMIN_PORT: '0', KEYS_GRPC_ADDR: `127.0.0.1:${keys.port}`, GATEWAY_IDENTITY_SECRET: 'edge-readiness-test-secret-0123456789abcdef' }),
      bus: { ...realBus, ping: async () => state.bus && (await realBus.ping()) },
      logger,
    });
    // The key-event consumer joins in the background after the start.
    const deadline = Date.now() + 20_000;
    while (!(await edge.health.report()).checks['key-events'] && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  });

  afterAll(async () => {
    await edge?.stop();
    await keys?.shutdown(0);
    await realBus?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    state.keysStore = true;
    state.bus = true;
  });

  async function readyz() {
    const res = await fetch(`http://127.0.0.1:${edge.adminPort}/readyz`);
    return { status: res.status, body: await res.json() };
  }

  it('is ready when keys serves, with the key-event and rate-limit usage consumers joined', async () => {
    expect(await readyz()).toEqual({ status: 200, body: { ready: true, checks: { keys: true, bus: true, 'key-events': true, 'rate-limit-usage': true }, degraded: [] } });
  });

  it('stays ready with the bus down, reporting it degraded in the body and the metrics', async () => {
    state.bus = false;
    expect(await readyz()).toMatchObject({ status: 200, body: { ready: true, degraded: ['bus'] } });
    const metrics = await (await fetch(`http://127.0.0.1:${edge.adminPort}/metrics`)).text();
    expect(metrics).toContain('gw_dependency_up{dependency="bus",kind="degraded",service="edge"} 0');
    expect(metrics).toContain('gw_dependency_up{dependency="keys",kind="required",service="edge"} 1');
  });

  it('is not ready while the keys service cannot authenticate (reachable, but its store is down)', async () => {
    state.keysStore = false;
    expect(await readyz()).toMatchObject({ status: 503, body: { ready: false, checks: { keys: false } } });
    state.keysStore = true;
    expect((await readyz()).status).toBe(200);
  });
});
