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

describe('kafkajs request queue (patches/kafkajs@2.2.4.patch)', () => {
  // kafkajs 2.2.4 re-arms a 1 ms timer forever on every idle broker connection (kafkajs#1751; Node 24 also
  // warns of the negative delay): measured here at about 18 ms of CPU a second per connection, in every
  // service. The patch keeps the queue from scheduling a check when nothing is pending and nothing throttles.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RequestQueue = require('kafkajs/src/network/requestQueue') as new (opts: object) => {
    throttledUntil: number;
    throttleCheckTimeoutId: NodeJS.Timeout | null;
    pending: unknown[];
    scheduleCheckPendingRequests(): void;
  };
  const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const queue = () => new RequestQueue({ maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout: true, clientId: 'test', broker: 'b', logger });

  it('schedules no check while idle and unthrottled', () => {
    const q = queue();
    q.scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('still schedules the check that ends a throttle', () => {
    const q = queue();
    q.throttledUntil = Date.now() + 1_000;
    q.scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    clearTimeout(q.throttleCheckTimeoutId!);
  });
});
