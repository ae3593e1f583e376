import type { BusMessage, OutgoingMessage, Subscription } from './port';
import { BatchingPublisher } from './batching-publisher';
import { createOutbox, type Outbox } from './outbox';
import { EngineHarness, uniqueName, waitFor } from './testing/engines';
import { switchableBus } from './testing/switchable-bus';

describe('BatchingPublisher', () => {
  let h: EngineHarness;
  let subscription: Subscription | undefined;
  let outbox: Outbox | undefined;

  beforeEach(async () => {
    h = await EngineHarness.create('embedded');
  });

  afterEach(async () => {
    await outbox?.close();
    await subscription?.stop();
    await h.dispose();
    outbox = subscription = undefined;
  });

  async function setup(opts: { lingerMs?: number; maxBatch?: number } = {}) {
    const real = await h.bus();
    const switchable = switchableBus(real);
    outbox = createOutbox({ bus: switchable.bus, store: await h.openedStore(), logger: h.logger, relayIntervalMs: 50 });
    const publisher = new BatchingPublisher({ outbox, logger: h.logger, ...opts });
    return { real, publisher, publishCalls: switchable.publishCalls };
  }

  async function consume(topics: string[]) {
    const received: BusMessage<{ n: number }>[] = [];
    subscription = await (await h.bus()).subscribe<{ n: number }>({ topics, group: uniqueName('g'), handleBatch: async (b) => void received.push(...b) });
    return received;
  }

  it('sends a burst as a few publishes per topic, off the caller’s path', async () => {
    const [a, b] = [uniqueName('calls'), uniqueName('spend')];
    const { publisher, publishCalls } = await setup({ lingerMs: 5, maxBatch: 500 });
    const received = await consume([a, b]);

    for (let n = 0; n < 1000; n++) publisher.enqueue(n % 2 ? a : b, { key: `acct-${n % 4}`, value: { n } });
    expect(publishCalls()).toBe(0); // nothing happened synchronously
    await publisher.flush();

    expect(publishCalls()).toBeLessThanOrEqual(4);
    await waitFor('every event', () => received.length >= 1000);
    expect(received.map((m) => m.value.n).sort((x, y) => x - y)).toEqual(Array.from({ length: 1000 }, (_, n) => n));
    for (const topic of [a, b]) {
      const seen = received.filter((m) => m.topic === topic).map((m) => m.value.n);
      expect(seen).toEqual([...seen].sort((x, y) => x - y));
    }
    await publisher.close();
  });

  it('sends a lone event after the linger time without a flush', async () => {
    const topic = uniqueName('calls');
    const { publisher } = await setup({ lingerMs: 5 });
    const received = await consume([topic]);
    publisher.enqueue(topic, { key: 'k', value: { n: 1 } });
    await waitFor('the lingering event', () => received.length === 1, 5_000);
    await publisher.close();
  });

  it('whenSent waits for the linger\'s publish without sending early, so events asked after still travel together', async () => {
    const topic = uniqueName('streams');
    const { publisher, publishCalls } = await setup({ lingerMs: 150 });
    const received = await consume([topic]);
    let sent = 0;
    const waits = [0, 1, 2].map((n) => {
      publisher.enqueue(topic, { key: 'k', value: { n } });
      return publisher.whenSent().then(() => void sent++);
    });
    await new Promise((r) => setTimeout(r, 50));
    expect([sent, publishCalls()]).toEqual([0, 0]);
    await Promise.all(waits);
    expect(publishCalls()).toBe(1);
    await waitFor('the three', () => received.length >= 3);
    // With nothing buffered, it resolves at once; a flush asked meanwhile carries what is waiting.
    await publisher.whenSent();
    publisher.enqueue(topic, { key: 'k', value: { n: 3 } });
    const waiting = publisher.whenSent();
    await publisher.flush();
    await waiting;
    expect(publishCalls()).toBe(2);
    await publisher.close();
  });

  it('whenSent rejects as the publish that carried its events did; the events stay for the retry', async () => {
    let refuse = true;
    const sent: OutgoingMessage[] = [];
    // The outbox's own store failing, as in the test below: it refuses until told otherwise.
    const failingOutbox = { publish: async (_topic: string, messages: OutgoingMessage[]) => { if (refuse) throw new Error('outbox refused (test)'); sent.push(...messages); } };
    const publisher = new BatchingPublisher({ outbox: failingOutbox, logger: h.logger, lingerMs: 5 });
    publisher.enqueue(uniqueName('streams'), { key: 'k', value: { n: 0 } });
    await expect(publisher.whenSent()).rejects.toThrow('outbox refused (test)');
    expect(publisher.size).toBe(1);
    refuse = false;
    await publisher.close();
    expect(sent.map((m) => m.value)).toEqual([{ n: 0 }]);
  });

  it('drains everything on close and refuses events after it', async () => {
    const topic = uniqueName('calls');
    const { publisher } = await setup({ lingerMs: 60_000 });
    const received = await consume([topic]);
    for (let n = 0; n < 25; n++) publisher.enqueue(topic, { key: 'k', value: { n } });
    await publisher.close();
    expect(publisher.size).toBe(0);
    expect(() => publisher.enqueue(topic, { key: 'k', value: { n: 99 } })).toThrow(/closed/);
    await waitFor('the drained events', () => received.length >= 25);
    expect(received.map((m) => m.value.n)).toEqual(Array.from({ length: 25 }, (_, n) => n));
  });

  it('keeps events, in order, when the outbox itself refuses them, and sends them on the next flush', async () => {
    const sent: OutgoingMessage[][] = [];
    let refuse = true;
    const publisher = new BatchingPublisher({
      outbox: {
        publish: async (_topic, messages) => {
          if (refuse) throw new Error('store is down (test)');
          sent.push(messages as OutgoingMessage[]);
        },
      },
      logger: h.logger,
      lingerMs: 60_000,
    });
    publisher.enqueue('t', { key: 'k', value: 1 });
    publisher.enqueue('t', { key: 'k', value: 2 });
    await expect(publisher.flush()).rejects.toThrow(/store is down/);
    publisher.enqueue('t', { key: 'k', value: 3 });
    expect(publisher.size).toBe(3);
    refuse = false;
    await publisher.close();
    expect(sent.flat().map((m) => m.value)).toEqual([1, 2, 3]);
    expect(publisher.size).toBe(0);
  });

  it('cuts publishes by bytes where a budget is set; flushes asked for behind a slow outbox send everything once', async () => {
    const sent: OutgoingMessage[][] = [];
    let release: () => void = () => undefined;
    let gate = new Promise<void>((r) => { release = r; });
    const publisher = new BatchingPublisher({
      outbox: {
        publish: async (_topic, messages) => {
          await gate;
          sent.push(messages as OutgoingMessage[]);
        },
      },
      logger: h.logger,
      lingerMs: 60_000,
      maxBatch: 1_000,
      maxBatchBytes: 100,
      sizeOf: (m) => (m.value as { bytes: number }).bytes,
    });
    // 30 events of 10 bytes while the outbox is stuck: every 10th fills a publish (100 bytes) and asks for a flush.
    for (let n = 0; n < 30; n++) publisher.enqueue('t', { key: 'k', value: { n, bytes: 10 } });
    // One large event still travels, alone.
    publisher.enqueue('t', { key: 'k', value: { n: 30, bytes: 500 } });
    release();
    await publisher.flush();
    gate = Promise.resolve();
    expect(sent.map((batch) => batch.length)).toEqual([10, 10, 10, 1]);
    expect(sent.flat().map((m) => (m.value as { n: number }).n)).toEqual(Array.from({ length: 31 }, (_, n) => n));
    await publisher.close();
  });
});
