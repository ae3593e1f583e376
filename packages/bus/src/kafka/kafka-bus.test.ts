import { testLogger } from '../testing/engines';
import { createKafkaBus } from './kafka-bus';

describe('kafka bus without a broker', () => {
  it('answers ping false within its timeout', async () => {
    // Port 9 (discard) on loopback: nothing listens, the connection is refused.
    const bus = createKafkaBus({ brokers: ['127.0.0.1:9'], clientId: 'bus-test', logger: testLogger(), pingTimeoutMs: 500 });
    const started = Date.now();
    expect(await bus.ping()).toBe(false);
    expect(Date.now() - started).toBeLessThan(2_000);
    await bus.close();
  });
});
