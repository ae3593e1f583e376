import { randomUUID } from 'node:crypto';
import { createLogger } from '@gw/platform';
import { createBus } from './create-bus';
import type { BusMessage } from './port';

/** Two deployments on one Kafka cluster: the same logical topic and group never cross namespaces. */
describe('namespaced Kafka bus', () => {
  const brokers = process.env.KAFKA_BROKERS?.split(',');
  const logger = createLogger('test', 'silent');

  test('each namespace consumes only its own events, under the logical topic name', async () => {
    if (!brokers) throw new Error('KAFKA_BROKERS must be set (the jest global setup starts a broker)');
    const topic = `ns-test-${randomUUID().slice(0, 8)}`;
    const a = createBus({ engine: 'kafka', brokers, clientId: 'a', namespace: `a${randomUUID().slice(0, 6)}` }, logger);
    const b = createBus({ engine: 'kafka', brokers, clientId: 'b', namespace: `b${randomUUID().slice(0, 6)}` }, logger);
    const seen: Record<'a' | 'b', BusMessage<string>[]> = { a: [], b: [] };
    try {
      const subs = await Promise.all((['a', 'b'] as const).map((name) => (name === 'a' ? a : b).subscribe<string>({
        topics: [topic], group: 'same-group', handleBatch: async (msgs) => { seen[name].push(...msgs); },
      })));
      await a.publish(topic, [{ key: 'k', value: 'from-a' }]);
      await b.publish(topic, [{ key: 'k', value: 'from-b' }]);
      const deadline = Date.now() + 15_000;
      while ((seen.a.length < 1 || seen.b.length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.a.map((m) => [m.topic, m.value])).toEqual([[topic, 'from-a']]);
      expect(seen.b.map((m) => [m.topic, m.value])).toEqual([[topic, 'from-b']]);
      await Promise.all(subs.map((s) => s.stop()));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 30_000);
});
