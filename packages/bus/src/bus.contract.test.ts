import { fork, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { Bus, BusMessage, Subscription } from './port';
import { EngineHarness, uniqueName, waitFor, type EngineName } from './testing/engines';

/**
 * The bus contract: the same assertions against every engine. Kafka runs against the real broker named by
 * KAFKA_BROKERS and fails (never skips) when there is none.
 */
jest.setTimeout(60_000);

const REPO_ROOT = resolve(__dirname, '../../..');
const FIXTURE = join(__dirname, 'testing', 'crashing-consumer.fixture.ts');

interface Item {
  key: string;
  n: number;
  pad?: string;
}

describe.each<EngineName>(['embedded', 'kafka'])('bus contract: %s engine', (engine) => {
  let h: EngineHarness;
  let subscriptions: Subscription[] = [];

  beforeEach(async () => {
    subscriptions = [];
    h = await EngineHarness.create(engine);
  });

  afterEach(async () => {
    await Promise.all(subscriptions.map((s) => s.stop()));
    await h?.dispose();
  });

  /** Subscribes and collects what the handler was given; `fail` decides per call whether to throw. */
  async function collect(bus: Bus, topic: string, group: string,
    opts: { maxBatch?: number; maxBatchBytes?: number; fetchWaitMs?: number; fail?: (batch: BusMessage<Item>[]) => boolean } = {}) {
    const handled: BusMessage<Item>[] = [];
    const calls: { batch: BusMessage<Item>[]; failed: boolean }[] = [];
    const sub = await bus.subscribe<Item>({
      topics: [topic],
      group,
      maxBatch: opts.maxBatch,
      maxBatchBytes: opts.maxBatchBytes,
      fetchWaitMs: opts.fetchWaitMs,
      handleBatch: async (batch) => {
        const failed = opts.fail?.(batch) ?? false;
        calls.push({ batch, failed });
        if (failed) throw new Error('handler failure (test)');
        handled.push(...batch);
      },
    });
    subscriptions.push(sub);
    return { handled, calls, sub };
  }

  const items = (count: number, keys = 5): Item[] => Array.from({ length: count }, (_, n) => ({ key: `k${n % keys}`, n }));
  const publishItems = (bus: Bus, topic: string, list: Item[]) => bus.publish(topic, list.map((v) => ({ key: v.key, value: v })));
  const ns = (messages: BusMessage<Item>[]) => messages.map((m) => m.value.n).sort((a, b) => a - b);

  it('delivers each key’s messages in publish order', async () => {
    const bus = await h.bus();
    const topic = uniqueName('order');
    const list = items(200);
    // Several publish calls, so order must hold across calls as well as within one.
    for (let i = 0; i < list.length; i += 40) await publishItems(bus, topic, list.slice(i, i + 40));
    const { handled } = await collect(bus, topic, uniqueName('g'), { maxBatch: 32 });

    await waitFor('200 messages', () => handled.length >= 200);
    expect(ns(handled)).toEqual(list.map((v) => v.n));
    for (const key of ['k0', 'k1', 'k2', 'k3', 'k4']) {
      const seen = handled.filter((m) => m.key === key).map((m) => m.value.n);
      expect(seen).toEqual(list.filter((v) => v.key === key).map((v) => v.n));
    }
    expect(handled.every((m) => m.topic === topic && typeof m.offset === 'string' && Number.isInteger(m.partition))).toBe(true);
  });

  it.each([[0], [400]])('fetch wait %i ms: 20 messages published 20 ms apart come one by one without it, a few batches with it', async (fetchWaitMs) => {
    const bus = await h.bus();
    const topic = uniqueName('wait');
    const { handled, calls } = await collect(bus, topic, uniqueName('g'), { fetchWaitMs });
    // Joined: a first message comes through (at once without a wait).
    await publishItems(bus, topic, [{ key: 'k', n: 0 }]);
    await waitFor('the first message', () => handled.length === 1);
    const before = calls.length;
    // 20 messages, one publish each, 20 ms apart: 400 ms in all.
    for (let n = 1; n <= 20; n++) {
      await publishItems(bus, topic, [{ key: 'k', n }]);
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitFor('21 messages', () => handled.length === 21);
    expect(ns(handled)).toEqual(Array.from({ length: 21 }, (_, n) => n));
    const batches = calls.length - before;
    if (fetchWaitMs === 0) expect(batches).toBeGreaterThanOrEqual(8);
    else expect(batches).toBeLessThanOrEqual(4);
  });

  it('a byte bound keeps batches of large messages small, sends a message over it alone, and lets small ones batch', async () => {
    const bus = await h.bus();
    const topic = uniqueName('bytes');
    // 12 messages of about 1 KB, one of about 5 KB among them, then 20 of a few dozen bytes.
    const list: Item[] = [
      ...Array.from({ length: 12 }, (_, n) => ({ key: 'k', n, pad: 'x'.repeat(n === 6 ? 5_000 : 1_000) })),
      ...Array.from({ length: 20 }, (_, i) => ({ key: 'k', n: 12 + i })),
    ];
    await publishItems(bus, topic, list);
    const maxBatchBytes = 3_500;
    const { handled, calls } = await collect(bus, topic, uniqueName('g'), { maxBatch: 50, maxBatchBytes, fetchWaitMs: 200 });

    await waitFor('every message', () => handled.length === list.length);
    expect(handled.map((m) => m.value.n)).toEqual(list.map((v) => v.n));
    const bytes = (batch: BusMessage<Item>[]) => batch.reduce((n, m) => n + JSON.stringify(m.value).length, 0);
    for (const { batch } of calls) if (batch.length > 1) expect(bytes(batch)).toBeLessThanOrEqual(maxBatchBytes);
    expect(calls.find(({ batch }) => batch.some((m) => m.value.n === 6))?.batch).toHaveLength(1);
    // Without the bound the first twelve would fit in one batch of 50; with it, at most three of 1 KB go together.
    expect(Math.max(...calls.map(({ batch }) => batch.filter((m) => m.value.pad).length))).toBeLessThanOrEqual(3);
    expect(Math.max(...calls.map(({ batch }) => batch.length))).toBeGreaterThanOrEqual(5);
  });

  it('gives every group every message, and each message to one member of a group', async () => {
    const topic = uniqueName('groups');
    const publisher = await h.bus();
    const first = items(60);
    await publishItems(publisher, topic, first);

    const a = await collect(publisher, topic, uniqueName('ga'));
    const b = await collect(await h.bus(), topic, uniqueName('gb'));
    await waitFor('both groups to see every message', () => a.handled.length >= 60 && b.handled.length >= 60);
    expect(ns(a.handled)).toEqual(first.map((v) => v.n));
    expect(ns(b.handled)).toEqual(first.map((v) => v.n));

    // Two members of one group (two bus instances), both in the group before anything is published.
    const sharedTopic = uniqueName('members');
    const shared = uniqueName('gshared');
    const m1 = await collect(await h.bus(), sharedTopic, shared, { maxBatch: 10 });
    const m2 = await collect(await h.bus(), sharedTopic, shared, { maxBatch: 10 });
    const list = items(150);
    for (let i = 0; i < list.length; i += 50) await publishItems(publisher, sharedTopic, list.slice(i, i + 50));
    const expected = list.map((v) => v.n);
    await waitFor('the group to see every message', () => m1.handled.length + m2.handled.length >= expected.length);
    await new Promise((r) => setTimeout(r, 500)); // room for a wrongful duplicate to show up
    expect(ns([...m1.handled, ...m2.handled])).toEqual(expected);
  });

  it('redelivers a batch whose handler threw, skipping nothing', async () => {
    const bus = await h.bus();
    const topic = uniqueName('retry');
    const list = items(30, 3);
    await publishItems(bus, topic, list);
    let failures = 0;
    const { handled, calls } = await collect(bus, topic, uniqueName('g'), { fail: () => failures++ === 0 });

    await waitFor('every message handled', () => handled.length >= list.length);
    const failedBatch = calls[0];
    expect(failedBatch.failed).toBe(true);
    const handledNs = handled.map((m) => m.value.n);
    for (const m of failedBatch.batch) expect(handledNs).toContain(m.value.n);
    expect(ns(handled)).toEqual(list.map((v) => v.n));
    for (const key of ['k0', 'k1', 'k2']) {
      expect(handled.filter((m) => m.key === key).map((m) => m.value.n)).toEqual(list.filter((v) => v.key === key).map((v) => v.n));
    }
  });

  it('starts a new `latest` group at what is published after it subscribed', async () => {
    const bus = await h.bus();
    const topic = uniqueName('latest');
    await publishItems(bus, topic, items(3));
    const received: BusMessage<Item>[] = [];
    subscriptions.push(await bus.subscribe<Item>({ topics: [topic], group: uniqueName('g'), from: 'latest', handleBatch: async (b) => void received.push(...b) }));
    const later = items(4).map((v) => ({ ...v, n: v.n + 100 }));
    await publishItems(bus, topic, later);
    await waitFor('the later messages', () => received.length >= later.length);
    await new Promise((r) => setTimeout(r, 300));
    expect(ns(received)).toEqual(later.map((v) => v.n));
  });

  it('lets a running handler finish on stop() and commits what it handled', async () => {
    const bus = await h.bus();
    const topic = uniqueName('stop');
    const group = uniqueName('g');
    await publishItems(bus, topic, items(5, 1));
    let started = false;
    let finished = false;
    const sub = await bus.subscribe<Item>({
      topics: [topic],
      group,
      handleBatch: async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 300));
        finished = true;
      },
    });
    await waitFor('the handler to start', () => started);
    const stopping = sub.stop();
    expect(finished).toBe(false);
    await stopping;
    expect(finished).toBe(true);

    const next = await collect(await h.bus(), topic, group);
    await publishItems(bus, topic, [{ key: 'k0', n: 99 }]);
    await waitFor('the message after the stop', () => next.handled.length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(next.handled.map((m) => m.value.n)).toEqual([99]);
  });

  it('tells a group\'s lag: what was published and it has not committed; nothing for a group that never started', async () => {
    const bus = await h.bus();
    const topic = uniqueName('lag');
    const group = uniqueName('g');
    await publishItems(bus, topic, items(5));
    const first = await collect(bus, topic, group);
    await waitFor('5 messages', () => first.handled.length >= 5);
    await first.sub.stop();
    await publishItems(bus, topic, items(3));
    expect(await bus.consumerLag!(group, [topic])).toEqual({ [topic]: 3 });
    expect(await bus.consumerLag!(uniqueName('never'), [topic])).toEqual({});
  });

  it('answers ping while up', async () => {
    expect(await (await h.bus()).ping()).toBe(true);
  });

  it('redelivers to the group what a member was handling when its process was killed', async () => {
    const topic = uniqueName('crash');
    const group = uniqueName('g');
    const publisher = await h.bus();
    await publishItems(publisher, topic, [{ key: 'only', n: 7 }]);
    await h.release(); // the child opens the same data

    const child = startChild({ endpoint: h.endpoint, topic, group });
    try {
      const received = await child.nextMessage('received');
      expect(received.values).toEqual([{ key: 'only', n: 7 }]);
    } finally {
      await child.kill();
    }

    const { handled } = await collect(await h.bus(), topic, group);
    await waitFor('the uncommitted message again', () => handled.length >= 1, 30_000);
    expect(handled.map((m) => m.value)).toEqual([{ key: 'only', n: 7 }]);
  });
});

function startChild(args: unknown) {
  const child: ChildProcess = fork(FIXTURE, [JSON.stringify(args)], {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    nextMessage(type: string, timeoutMs = 30_000): Promise<{ type: string; values: unknown[] }> {
      return new Promise((resolvePromise, reject) => {
        const timer = setTimeout(() => reject(new Error(`child sent no "${type}" within ${timeoutMs} ms`)), timeoutMs);
        const onMessage = (m: { type: string; values: unknown[] }) => {
          if (m.type !== type) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolvePromise(m);
        };
        child.on('message', onMessage);
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`child exited (code ${code}, signal ${signal}) before "${type}"`));
        });
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
