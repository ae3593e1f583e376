import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { healthProto } from '@gw/proto';
import { startGrpcServer, type GrpcServerHandle } from './grpc';
import { grpcServingCheck, Health } from './health';
import { Metrics } from './metrics';

type HealthClient = grpc.Client & {
  Check(req: { service: string }, cb: (err: grpc.ServiceError | null, res?: { status: string }) => void): void;
};

describe('Health', () => {
  const checks: Record<string, () => Promise<boolean>> = {};
  let health: Health;
  let handle: GrpcServerHandle;
  let client: HealthClient;

  beforeAll(async () => {
    health = new Health()
      .addCheck('store', () => checks.store())
      .addCheck('bus', () => checks.bus());
    handle = await startGrpcServer('127.0.0.1:0', (server) => health.register(server));
    client = new healthProto.grpc.health.v1.Health(`127.0.0.1:${handle.port}`, grpc.credentials.createInsecure()) as unknown as HealthClient;
  });
  afterAll(async () => {
    client.close();
    await handle.shutdown(0);
  });

  const check = () => new Promise<string>((resolve, reject) => client.Check({ service: '' }, (err, res) => (err ? reject(err) : resolve(res!.status))));

  it.each<[string, () => Promise<boolean>, string]>([
    ['every check passes', async () => true, 'SERVING'],
    ['a check fails', async () => false, 'NOT_SERVING'],
    ['a check throws', async () => { throw new Error('store closed'); }, 'NOT_SERVING'],
  ])('gRPC Check when %s: %s', async (_what, store, expected) => {
    checks.store = store;
    checks.bus = async () => true;
    expect(await check()).toBe(expected);
  });

  it('a check that hangs counts as failed (bounded, not a hung probe)', async () => {
    checks.store = () => new Promise(() => {});
    checks.bus = async () => true;
    const started = Date.now();
    expect(await health.report()).toEqual({ ready: false, checks: { store: false, bus: true }, degraded: [] });
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

describe('Health while draining', () => {
  it('gRPC Check answers NOT_SERVING once draining, though every check passes', async () => {
    const health = new Health().addCheck('store', async () => true);
    const handle = await startGrpcServer('127.0.0.1:0', (server) => health.register(server));
    const client = new healthProto.grpc.health.v1.Health(`127.0.0.1:${handle.port}`, grpc.credentials.createInsecure()) as unknown as HealthClient;
    const check = () => new Promise<string>((resolve, reject) => client.Check({ service: '' }, (err, res) => (err ? reject(err) : resolve(res!.status))));
    try {
      expect(await check()).toBe('SERVING');
      health.startDraining();
      expect(await check()).toBe('NOT_SERVING');
    } finally {
      client.close();
      await handle.shutdown(0);
    }
  });
});

describe('Health with required and degraded dependencies', () => {
  const state = { store: true, bus: true };
  const lines: Array<{ level: number; msg: string; dependency?: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let metrics: Metrics;
  let health: Health;

  beforeEach(() => {
    state.store = true;
    state.bus = true;
    lines.length = 0;
    metrics = new Metrics('health-test', false);
    health = new Health({ logger, metrics })
      .addCheck('store', async () => state.store)
      .addCheck('bus', async () => state.bus, 'degraded');
  });

  const gauge = async () => (await metrics.registry.getSingleMetricAsString('gw_dependency_up')).split('\n').filter((l) => !l.startsWith('#')).sort();

  it('a degraded dependency that is down keeps the instance ready and is named in the report', async () => {
    state.bus = false;
    expect(await health.report()).toEqual({ ready: true, checks: { store: true, bus: false }, degraded: ['bus'] });
  });

  it('a required dependency that is down makes the instance not ready', async () => {
    state.store = false;
    state.bus = false;
    expect(await health.report()).toEqual({ ready: false, checks: { store: false, bus: false }, degraded: ['bus'] });
  });

  it('exports one gauge per dependency, refreshed on scrape', async () => {
    state.bus = false;
    expect(await gauge()).toEqual([
      'gw_dependency_up{dependency="bus",kind="degraded",service="health-test"} 0',
      'gw_dependency_up{dependency="store",kind="required",service="health-test"} 1',
    ]);
    state.bus = true;
    expect(await gauge()).toContain('gw_dependency_up{dependency="bus",kind="degraded",service="health-test"} 1');
  });

  it('logs a dependency once when it goes down and once when it comes back, not on every probe', async () => {
    await health.report();
    expect(lines).toEqual([]);
    state.bus = false;
    await health.report();
    await health.report();
    state.store = false;
    await health.report();
    state.bus = true;
    state.store = true;
    await health.report();
    await health.report();
    expect(lines).toHaveLength(4);
    expect(lines.slice(0, 2).map((l) => [l.level, l.dependency, l.msg])).toEqual([
      [40, 'bus', 'dependency is down: serving degraded through its fallback'],
      [50, 'store', 'required dependency is down: not ready'],
    ]);
    // Both came back in one probe: one line each, in either order.
    expect(lines.slice(2).map((l) => [l.level, l.dependency, l.msg]).sort()).toEqual([
      [30, 'bus', 'dependency is back'],
      [30, 'store', 'dependency is back'],
    ]);
  });
});

describe('grpcServingCheck', () => {
  it('given the client calls go through, checks over that client\'s own channel', async () => {
    const other = new Health().addCheck('store', async () => true);
    const handle = await startGrpcServer('127.0.0.1:0', (server) => other.register(server));
    const calls = new grpc.Client(`127.0.0.1:${handle.port}`, grpc.credentials.createInsecure());
    const serving = grpcServingCheck(calls);
    try {
      expect(await serving.check()).toBe(true);
      // The service still answers on a new connection, but the calls' channel cannot carry a call: not ready.
      calls.close();
      expect(await serving.check()).toBe(false);
    } finally {
      serving.close();
      await handle.shutdown(0);
    }
  });

  it('passes only while the other service reports SERVING, and fails when it is gone', async () => {
    let storeUp = true;
    const other = new Health().addCheck('store', async () => storeUp);
    const handle = await startGrpcServer('127.0.0.1:0', (server) => other.register(server));
    const serving = grpcServingCheck(`127.0.0.1:${handle.port}`);
    try {
      expect(await serving.check()).toBe(true);
      storeUp = false;
      expect(await serving.check()).toBe(false);
      storeUp = true;
      expect(await serving.check()).toBe(true);
      await handle.shutdown(0);
      expect(await serving.check()).toBe(false);
    } finally {
      serving.close();
      await handle.shutdown(0);
    }
  });
});
