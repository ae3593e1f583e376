import * as grpc from '@grpc/grpc-js';
import { healthProto } from '@gw/proto';
import { startGrpcServer, type GrpcServerHandle } from './grpc';
import { Health } from './health';

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
    expect(await health.report()).toEqual({ ready: false, checks: { store: false, bus: true } });
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
