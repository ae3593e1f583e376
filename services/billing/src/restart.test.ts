import * as grpc from '@grpc/grpc-js';
import { fork, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { createBus, type Bus } from '@gw/bus';
import { IDENTITY_HEADER, IdentitySigner, type RunningService } from '@gw/platform';
import { healthProto, TOPICS } from '@gw/proto';
import { startBillingService } from './app';
import { BILLING_TEST_SECRET, Engines, eventually, silentLogger, usageEvent } from './test-harness';
import { USAGE_CONSUMER_GROUP } from './usage-consumer';

const REPO_ROOT = resolve(__dirname, '../../..');
const DEAD_MEMBER = join(REPO_ROOT, 'packages/bus/src/testing/crashing-consumer.fixture.ts');
/** How long the killed member holds the group: billing's join cannot complete before it has expired. */
const DEAD_SESSION_MS = 20_000;

jest.setTimeout(120_000);

// The jest global setup always provides both engines (MONGO_URL, KAFKA_BROKERS).
describe('billing restart (MongoDB-wire store, Kafka bus)', () => {
  const namespace = `billing-restart-${process.pid}-${Date.now().toString(36)}`;
  const brokers = process.env.KAFKA_BROKERS!.split(',');
  let engines: Engines;
  let bus: Bus;
  let service: RunningService | undefined;

  beforeAll(async () => {
    engines = await Engines.open('mongo');
    bus = createBus({ engine: 'kafka', brokers, clientId: 'billing-restart-test', namespace, sessionTimeoutMs: 6_000 }, silentLogger());
  });

  afterAll(async () => {
    await service?.stop();
    await bus?.close();
    await engines?.close();
  });

  /** A member of billing's group that dies without leaving, as a killed billing process does. */
  async function leaveADeadMemberInTheGroup(): Promise<void> {
    const child: ChildProcess = fork(DEAD_MEMBER, [JSON.stringify({
      endpoint: { engine: 'kafka', brokers },
      topic: `${namespace}.${TOPICS.usage}`,
      group: `${namespace}.${USAGE_CONSUMER_GROUP}`,
      sessionTimeoutMs: DEAD_SESSION_MS,
    })], { cwd: REPO_ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    await new Promise<void>((joined, failed) => {
      child.on('message', (m: { type: string }) => { if (m.type === 'subscribed') joined(); });
      child.once('exit', (code) => failed(new Error(`dead-member fixture exited early (code ${code})`)));
    });
    child.kill('SIGKILL');
    await exited;
  }

  it('serves HTTP and gRPC while its consumer waits to rejoin, and bills the waiting usage once it has', async () => {
    await leaveADeadMemberInTheGroup();
    const event = usageEvent();
    await bus.publish(TOPICS.usage, [{ key: event.account_id, value: event }]);

    service = await startBillingService({
      config: engines.config({ SEED_ACCOUNTS: JSON.stringify([{ id: 'acct_a', wallet_usd: '1' }]) }),
      store: engines.store, bus, blobs: engines.blobs, logger: silentLogger(),
    });
    const base = `http://127.0.0.1:${service.httpPort}`;
    const balance = async () => {
      const identity = { accountId: 'acct_a', keyHash: event.key_hash, isManagement: false, keyLimitMicros: null, keyLimitReset: null };
      const token = new IdentitySigner(BILLING_TEST_SECRET, 'edge').mint({ method: 'GET', path: '/v1/billing/balance' }, identity, 'restart-test');
      const res = await fetch(`${base}/v1/billing/balance`, { headers: { [IDENTITY_HEADER]: token } });
      return { status: res.status, wallet: ((await res.json()) as { data?: { wallet: string } }).data?.wallet };
    };

    // The consumer cannot have joined yet: the dead member holds the group for DEAD_SESSION_MS.
    const health = await service.health.report();
    // The archive's and the failed calls' groups may or may not still hold a dead member: joined already or not.
    expect(health).toEqual({
      ready: true, checks: { store: true, bus: true, 'usage-consumer': false, 'archive-consumer': expect.any(Boolean), 'call-failures-consumer': expect.any(Boolean) },
      degraded: expect.arrayContaining(['usage-consumer']),
    });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await balance()).toEqual({ status: 200, wallet: '1.000000' });
    expect(await grpcServing(service.grpcPort)).toBe('SERVING');
    expect((await service.health.report()).degraded).toContain('usage-consumer');

    // In the background the consumer joins once the dead member is gone, and the waiting usage lands.
    await eventually('the usage event billed', async () => (await balance()).wallet === '0.999800', 90_000);
    await eventually('the archive and failed-call consumers joined', async () => {
      const { checks } = await service!.health.report();
      return checks['archive-consumer'] === true && checks['call-failures-consumer'] === true;
    }, 60_000);
    expect(await service.health.report()).toEqual({ ready: true, checks: { store: true, bus: true, 'usage-consumer': true, 'archive-consumer': true, 'call-failures-consumer': true }, degraded: [] });
  });
});

function grpcServing(port: number): Promise<string> {
  const client = new healthProto.grpc.health.v1.Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise<string>((done, failed) => {
    client.Check({ service: '' }, { deadline: Date.now() + 5_000 }, (err, res) => {
      if (err) failed(err);
      else done(res!.status!);
    });
  }).finally(() => client.close());
}
