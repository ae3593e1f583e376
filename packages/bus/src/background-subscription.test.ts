import { subscribeInBackground } from './background-subscription';
import { Backoff } from './internal/async';
import type { Bus, BusMessage } from './port';
import { EngineHarness, uniqueName, waitFor } from './testing/engines';

/** A real bus whose first `failures` subscribes throw, as a group join does while the broker is away. */
function failingSubscribes(inner: Bus, failures: number): { bus: Bus; attempts(): number } {
  let attempts = 0;
  return {
    bus: {
      ...inner,
      subscribe: (opts) => (++attempts <= failures ? Promise.reject(new Error('broker unavailable (test)')) : inner.subscribe(opts)),
    },
    attempts: () => attempts,
  };
}

describe('subscribeInBackground', () => {
  let h: EngineHarness;

  beforeEach(async () => {
    h = await EngineHarness.create('embedded');
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('returns at once, keeps retrying a failing join, then consumes', async () => {
    const real = await h.bus();
    const flaky = failingSubscribes(real, 3);
    const topic = uniqueName('bg');
    const received: BusMessage<{ n: number }>[] = [];
    const sub = subscribeInBackground<Record<string, { n: number }>>(flaky.bus, {
      topics: [topic], group: uniqueName('g'), handleBatch: async (m) => void received.push(...m),
    }, h.logger, new Backoff(10, 20));
    try {
      expect(sub.joined()).toBe(false);
      await sub.whenJoined();
      expect(sub.joined()).toBe(true);
      expect(flaky.attempts()).toBe(4);
      await real.publish(topic, [{ key: 'k', value: { n: 1 } }]);
      await waitFor('the message', () => received.length === 1);
    } finally {
      await sub.stop();
    }
  });

  it('stop() ends the retries and never joins afterwards', async () => {
    const flaky = failingSubscribes(await h.bus(), Number.POSITIVE_INFINITY);
    const sub = subscribeInBackground(flaky.bus, { topics: [uniqueName('bg')], group: uniqueName('g'), handleBatch: async () => undefined }, h.logger, new Backoff(10, 20));
    await waitFor('a few attempts', () => flaky.attempts() >= 2);
    await sub.stop();
    const after = flaky.attempts();
    await new Promise((r) => setTimeout(r, 100));
    expect(flaky.attempts()).toBe(after);
    expect(sub.joined()).toBe(false);
  });

  it('a join still in flight when stopped is left again once it lands (no consumer outlives stop)', async () => {
    const real = await h.bus();
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const slow: Bus = { ...real, subscribe: async (opts) => { await gate; return real.subscribe(opts); } };
    const topic = uniqueName('bg');
    const received: unknown[] = [];
    const sub = subscribeInBackground(slow, { topics: [topic], group: uniqueName('g'), handleBatch: async (m) => void received.push(...m) }, h.logger);
    const stopped = sub.stop();
    release();
    await stopped;
    await real.publish(topic, [{ key: 'k', value: 1 }]);
    // The embedded bus polls every 250 ms: a consumer still running would have had it by now.
    await new Promise((r) => setTimeout(r, 800));
    expect(received).toEqual([]);
  });
});
