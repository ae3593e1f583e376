import type { BusMessage, Subscription } from './port';
import { createOutbox, type Outbox } from './outbox';
import { EngineHarness, uniqueName, waitFor } from './testing/engines';
import { switchableBus } from './testing/switchable-bus';

interface Usage {
  account: string;
  n: number;
}

describe('outbox', () => {
  let h: EngineHarness;
  let subscriptions: Subscription[];
  let outboxes: Outbox[];

  beforeEach(async () => {
    h = await EngineHarness.create('embedded');
    subscriptions = [];
    outboxes = [];
  });

  afterEach(async () => {
    await Promise.all(outboxes.map((o) => o.close()));
    await Promise.all(subscriptions.map((s) => s.stop()));
    await h.dispose();
  });

  async function setup(relayIntervalMs = 50) {
    const real = await h.bus();
    const switchable = switchableBus(real);
    const outbox = createOutbox({ bus: switchable.bus, store: await h.openedStore(), logger: h.logger, relayIntervalMs });
    outboxes.push(outbox);
    return { real, outbox, ...switchable };
  }

  async function consume(topic: string) {
    const received: BusMessage<Usage>[] = [];
    const bus = await h.bus();
    subscriptions.push(await bus.subscribe<Usage>({ topics: [topic], group: uniqueName('billing'), handleBatch: async (b) => void received.push(...b) }));
    return received;
  }

  const usage = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ key: `acct-${(from + i) % 2}`, value: { account: `acct-${(from + i) % 2}`, n: from + i } }));
  const ns = (ms: BusMessage<Usage>[]) => ms.map((m) => m.value.n).sort((a, b) => a - b);
  const range = (count: number) => Array.from({ length: count }, (_, i) => i);
  const settle = () => new Promise((r) => setTimeout(r, 300));

  it('keeps what the bus refused and relays every event exactly once when it is back', async () => {
    const topic = uniqueName('usage');
    const { outbox, setDown } = await setup();
    const received = await consume(topic);

    setDown(true);
    for (let i = 0; i < 10; i++) await expect(outbox.publish(topic, usage(i * 3, 3))).resolves.toBeUndefined();
    expect(await outbox.pending()).toBe(10);
    await settle();
    expect(received).toHaveLength(0);

    setDown(false);
    await waitFor('the relay to empty the outbox', () => received.length >= 30);
    // A consumer may see the last relayed publish before the relay's delete of its entry commits: let the pass end.
    await outbox.relay();
    expect(await outbox.pending()).toBe(0);
    await settle();
    expect(ns(received)).toEqual(range(30));
    for (const account of ['acct-0', 'acct-1']) {
      const seen = received.filter((m) => m.key === account).map((m) => m.value.n);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
    }
  });

  it('lets nothing overtake events still waiting in the outbox', async () => {
    const topic = uniqueName('usage');
    const { outbox, setDown } = await setup(60_000);
    const received = await consume(topic);

    setDown(true);
    await outbox.publish(topic, usage(0, 2));
    setDown(false);
    await outbox.publish(topic, usage(2, 2)); // the bus is up, but older events are still pending
    await outbox.relay();
    await waitFor('all four events', () => received.length >= 4);
    expect(received.map((m) => m.value.n)).toEqual([0, 1, 2, 3]);
    expect(await outbox.pending()).toBe(0);

    await outbox.publish(topic, usage(4, 1)); // backlog gone: straight to the bus
    await waitFor('the direct publish', () => received.length >= 5);
    expect(await outbox.pending()).toBe(0);
  });

  it('relays after a restart what was pending before it', async () => {
    const topic = uniqueName('usage');
    const first = await setup(60_000);
    first.setDown(true);
    for (let i = 0; i < 5; i++) await first.outbox.publish(topic, usage(i * 4, 4));
    expect(await first.outbox.pending()).toBe(5);
    await first.outbox.close();
    await h.release(); // process restart: bus and store closed, then opened again

    const received = await consume(topic);
    const second = await setup();
    await waitFor('the pending events after the restart', () => received.length >= 20);
    await settle();
    expect(ns(received)).toEqual(range(20));
    expect(await second.outbox.pending()).toBe(0);
  });

  it('publishes straight to the bus when it is up, leaving the outbox empty', async () => {
    const topic = uniqueName('usage');
    const { outbox, publishCalls } = await setup();
    const received = await consume(topic);
    await outbox.publish(topic, usage(0, 3));
    expect(publishCalls()).toBe(1);
    expect(await outbox.pending()).toBe(0);
    await waitFor('the events', () => received.length >= 3);
  });
});
