import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { createStore, type Store } from '@gw/store';
import type { Bus, BusMessage, Subscription } from '../port';
import { testLogger, uniqueName, waitFor } from '../testing/engines';
import { createEmbeddedBus, type EmbeddedBusOptions } from './embedded-bus';
import { DocumentLogs } from './document-logs';
import { groupDocId, type GroupDoc } from './docs';
import { DOCUMENT_LOG_PREFIX, DOCUMENT_TOPICS_COLLECTION, GROUPS_COLLECTION } from './names';

/** Behaviour only the embedded engine has: lease hand-over, trimming, gaps, the store layout. */
describe('embedded bus', () => {
  let dataDir: string;
  let store: Store;
  let buses: Bus[];
  let subscriptions: Subscription[];

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-bus-embedded-'));
    store = createStore({ engine: 'embedded', dataDir });
    buses = [];
    subscriptions = [];
  });

  afterEach(async () => {
    await Promise.all(subscriptions.map((s) => s.stop()));
    await Promise.all(buses.map((b) => b.close()));
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  function bus(opts: Partial<EmbeddedBusOptions> = {}): Bus {
    const b = createEmbeddedBus({ store, logger: testLogger(), ...opts });
    buses.push(b);
    return b;
  }

  async function consume(b: Bus, topic: string, group: string, from?: 'earliest' | 'latest') {
    const received: BusMessage<number>[] = [];
    const sub = await b.subscribe<number>({ topics: [topic], group, from, handleBatch: async (batch) => void received.push(...batch) });
    subscriptions.push(sub);
    return { received, sub };
  }

  const numbers = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ key: 'k', value: from + i }));
  /** The entries a topic's log holds, and its trim mark. */
  const held = async (topic: string) => store.logs!.read(topic, 0, 1_000_000);
  const trimmedThrough = async (topic: string) => (await store.logs!.mark(topic))?.trimmedThrough;
  /** Another connection to the bus file, as a crashed publisher or a torn page would leave it. */
  const sideways = (sql: string, ...params: (string | number)[]) => {
    const side = new DatabaseSync(join(dataDir, 'store.sqlite'));
    try {
      side.exec('PRAGMA busy_timeout = 5000');
      return side.prepare(sql).run(...params).changes;
    } finally {
      side.close();
    }
  };

  it('hands a group over at once when its consuming member stops, without waiting out the lease', async () => {
    const topic = uniqueName('handover');
    const group = uniqueName('g');
    const first = await consume(bus({ leaseMs: 60_000 }), topic, group);
    const second = await consume(bus({ leaseMs: 60_000 }), topic, group);
    const publisher = bus();
    await publisher.publish(topic, numbers(0, 10));
    await waitFor('the first ten', () => first.received.length + second.received.length >= 10);
    const owner = first.received.length > 0 ? first : second;
    const other = owner === first ? second : first;
    expect(other.received).toHaveLength(0);

    await owner.sub.stop();
    await publisher.publish(topic, numbers(10, 5));
    await waitFor('the other member to take over', () => other.received.length >= 5, 3_000);
    expect(other.received.map((m) => m.value)).toEqual([10, 11, 12, 13, 14]);
  });

  it('a busy member commits its position a few times a second, not after every batch, and all of it on stop', async () => {
    const topic = uniqueName('busy');
    const group = uniqueName('g');
    // The same store, counting the writes that move a group's offset.
    let commits = 0;
    const counting = Object.create(store) as Store;
    counting.collection = ((name: string) => {
      const c = store.collection(name);
      if (name !== 'bus_groups') return c;
      const updateOne = c.updateOne.bind(c);
      c.updateOne = (filter, update, opts) => {
        if ('$max' in update) commits++;
        return updateOne(filter, update, opts);
      };
      return c;
    }) as Store['collection'];
    const b = bus({ store: counting, commitIntervalMs: 100 });
    const received: number[] = [];
    const sub = await b.subscribe<number>({
      topics: [topic], group, maxBatch: 1,
      handleBatch: async (batch) => {
        received.push(...batch.map((m) => m.value));
        await new Promise((r) => setTimeout(r, 2));
      },
    });
    await b.publish(topic, numbers(0, 150));
    await waitFor('all 150', () => received.length >= 150, 20_000);
    // 150 batches over at least 300 ms: one commit per batch would be 150.
    expect(commits).toBeLessThan(40);
    await sub.stop();

    const again = await consume(bus(), topic, group);
    await b.publish(topic, numbers(150, 1));
    await waitFor('the next one', () => again.received.length >= 1);
    expect(again.received.map((m) => m.value)).toEqual([150]);
  });

  it('starts a `latest` group after what was published before it subscribed', async () => {
    const topic = uniqueName('latest');
    const b = bus();
    await b.publish(topic, numbers(0, 3));
    const { received } = await consume(b, topic, uniqueName('g'), 'latest');
    await b.publish(topic, numbers(3, 2));
    await waitFor('the new messages', () => received.length >= 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(received.map((m) => m.value)).toEqual([3, 4]);
  });

  it('trims entries every group has committed, and a later group starts at what is left', async () => {
    const topic = uniqueName('trim');
    const b = bus({ trimIntervalMs: 50 });
    const fast = await consume(b, topic, uniqueName('fast'));
    const slowGroup = uniqueName('slow');
    let slowHandled = 0;
    const slow = await b.subscribe<number>({
      topics: [topic],
      group: slowGroup,
      maxBatch: 10,
      handleBatch: async () => {
        slowHandled += 10;
        if (slowHandled > 20) throw new Error('stuck (test)'); // commits 20, then stops moving
      },
    });
    subscriptions.push(slow);
    await b.publish(topic, numbers(1, 50));
    await waitFor('the fast group', () => fast.received.length >= 50);
    await waitForAsync(async () => (await held(topic)).length === 30);
    expect(await trimmedThrough(topic)).toBe(20);

    const late = await consume(b, topic, uniqueName('late'));
    await waitFor('the late group to read what was kept', () => late.received.length >= 30, 3_000);
    expect(late.received.map((m) => m.value)).toEqual(numbers(21, 30).map((m) => m.value));
  });

  it('trims every topic of the store, also those only other buses on it publish and consume (one trimmer per store)', async () => {
    const topic = uniqueName('others');
    const worker = bus({ trimIntervalMs: 0 });
    const { received } = await consume(worker, topic, uniqueName('g'));
    await worker.publish(topic, numbers(0, 30));
    await waitFor('all consumed', () => received.length === 30);
    // Committed, and nothing deleted: the bus that published and consumed does not trim.
    await waitForAsync(async () => (await store.collection<GroupDoc>(GROUPS_COLLECTION).findOne({ topic }))?.offset === 30);
    expect(await held(topic)).toHaveLength(30);
    bus({ trimIntervalMs: 50 });
    await waitForAsync(async () => (await held(topic)).length === 0);
    expect(await trimmedThrough(topic)).toBe(30);
  });

  it('an ephemeral group goes when its subscription stops, or once its member has been gone for the grace, and then holds no entries back', async () => {
    const topic = uniqueName('ephemeral');
    const groupDocs = store.collection<GroupDoc>(GROUPS_COLLECTION);
    const b = bus({ trimIntervalMs: 50, ephemeralGroupGraceMs: 1_000 });
    const durable = await consume(b, topic, uniqueName('durable'));
    const group = uniqueName('edge-instance');
    const received: number[] = [];
    const sub = await b.subscribe<number>({ topics: [topic], group, ephemeral: true, handleBatch: async (batch) => void received.push(...batch.map((m) => m.value)) });
    await b.publish(topic, numbers(1, 10));
    await waitFor('both groups', () => received.length === 10 && durable.received.length === 10);
    await sub.stop();
    expect(await groupDocs.findOne({ _id: groupDocId(group, topic) })).toBeNull();
    await waitForAsync(async () => (await held(topic)).length === 0);

    // A member that died (no stop): its group stays until its lease has lapsed for the grace, holding entries.
    const now = Date.now();
    const dead = { _id: groupDocId('dead-instance', topic), group: 'dead-instance', topic, offset: 10, owner: 'gone', leaseUntil: now + 500, ephemeral: true, createdAt: now };
    await groupDocs.insertOne(dead);
    await b.publish(topic, numbers(11, 5));
    await waitFor('the durable group', () => durable.received.length === 15);
    await new Promise((r) => setTimeout(r, 300));
    expect(await held(topic)).toHaveLength(5);
    expect(await groupDocs.findOne({ _id: dead._id })).not.toBeNull();
    await waitForAsync(async () => (await held(topic)).length === 0, 5_000);
    expect(await groupDocs.findOne({ _id: dead._id })).toBeNull();
    // A durable group is never dropped, however long its member is gone.
    expect(await groupDocs.count({ topic })).toBe(1);
  });

  it('a trim cut short (marked, not all deleted) is finished by the next one, the entries below the mark included', async () => {
    const topic = uniqueName('cut-short');
    const b = bus({ trimIntervalMs: 0 });
    const group = await consume(b, topic, uniqueName('g'));
    const count = 12_001;
    await b.publish(topic, numbers(1, count));
    await waitFor('every entry', () => group.received.length >= count);
    await group.sub.stop();
    // As a trim that crashed after its mark: the mark says 12,000, nothing below it was deleted.
    await store.logs!.markTrimmed(topic, 12_000);
    const trimmer = bus({ trimIntervalMs: 50 });
    // A group on the new bus makes the topic one it trims.
    await consume(trimmer, topic, uniqueName('late'), 'latest');
    await waitForAsync(async () => (await held(topic)).length === 0, 10_000);
    expect(await trimmedThrough(topic)).toBe(count);
  }, 30_000);

  it('trims without reading the entries it deletes, so an unreadable entry every group has passed goes too', async () => {
    const topic = uniqueName('unread');
    const b = bus({ trimIntervalMs: 0 });
    const group = await consume(b, topic, uniqueName('g'));
    await b.publish(topic, numbers(1, 1_000));
    await waitFor('every entry', () => group.received.length >= 1_000);
    await group.sub.stop();
    // Reading every entry to find the oldest held a minute of entries at once, over 100 MB per trim at 1,000
    // calls/s; an entry that cannot be decoded shows whether the trim reads them.
    expect(sideways(`UPDATE "log:${topic}" SET value = '{not json' WHERE seq = 500`)).toBe(1);
    const trimmer = bus({ trimIntervalMs: 50 });
    await consume(trimmer, topic, uniqueName('late'), 'latest');
    await waitForAsync(async () => (await held(topic)).length === 0, 5_000);
    expect(await trimmedThrough(topic)).toBe(1_000);
  });

  it('keeps at most the retained number of entries, committed or not, and a group behind the bound resumes after it', async () => {
    const topic = uniqueName('retain');
    const b = bus({ trimIntervalMs: 50, retentionEntries: 20 });
    const group = uniqueName('stuck');
    const stuck = await b.subscribe<number>({ topics: [topic], group, handleBatch: async () => { throw new Error('down (test)'); } });
    await b.publish(topic, numbers(1, 50));
    await waitForAsync(async () => (await held(topic)).length === 20);
    expect(await trimmedThrough(topic)).toBe(30);
    await stuck.stop();

    const resumed = await consume(b, topic, group);
    await waitFor('the retained entries', () => resumed.received.length >= 20, 5_000);
    expect(resumed.received.map((m) => m.value)).toEqual(numbers(31, 20).map((m) => m.value));
  });

  it('deletes entries older than the retention time even on a topic nobody consumes', async () => {
    const topic = uniqueName('aged');
    const b = bus({ trimIntervalMs: 50, retentionMs: 1_000, retentionEntries: 0 });
    await b.publish(topic, numbers(1, 5));
    expect(await held(topic)).toHaveLength(5);
    await waitForAsync(async () => (await held(topic)).length === 0);
    const { received } = await consume(b, topic, uniqueName('g'));
    await b.publish(topic, numbers(6, 2));
    await waitFor('the entries published after', () => received.length >= 2);
    expect(received.map((m) => m.value)).toEqual([6, 7]);
  });

  it('waits for a missing sequence, then skips it after the grace period', async () => {
    const topic = uniqueName('gap');
    const b = bus({ gapGraceMs: 400 });
    const { received } = await consume(b, topic, uniqueName('g'));
    await b.publish(topic, numbers(1, 2));
    await waitFor('the first two', () => received.length >= 2);
    // A publisher that reserved sequence 3 and died before writing it.
    expect(sideways('UPDATE _gw_log_marks SET seq = seq + 1 WHERE name = ?', topic)).toBe(1);
    const published = Date.now();
    await b.publish(topic, numbers(4, 2));
    await waitFor('the messages after the gap', () => received.length >= 4, 5_000);
    expect(Date.now() - published).toBeGreaterThanOrEqual(350);
    expect(received.map((m) => m.offset)).toEqual(['1', '2', '4', '5']);
  });

  it('stores one publish call as one entry per message with consecutive sequences', async () => {
    const topic = uniqueName('layout');
    const b = bus();
    await b.publish(topic, [
      { key: 'a', value: { 'dotted.key': 1, $dollar: true } },
      { key: 'b', value: null },
    ]);
    const entries = await held(topic);
    expect(entries.map((e) => [e.seq, e.key])).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    const { received } = await consume(b, topic, uniqueName('g'));
    await waitFor('both', () => received.length >= 2);
    expect(received.map((m) => m.value)).toEqual([{ 'dotted.key': 1, $dollar: true }, null]);
  });

  it('concurrent publish calls get consecutive sequences in call order, and a consumer sees no gap', async () => {
    const topic = uniqueName('concurrent');
    const b = bus({ gapGraceMs: 60_000 });
    const { received } = await consume(b, topic, uniqueName('g'));
    await Promise.all(Array.from({ length: 40 }, (_, i) => b.publish(topic, numbers(i * 3, 3))));
    const entries = await held(topic);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(entries.map((e) => JSON.parse(e.value))).toEqual(Array.from({ length: 120 }, (_, i) => i));
    // A gap would hold the consumer for the minute of grace.
    await waitFor('all 120', () => received.length >= 120, 5_000);
    expect(received.map((m) => m.value)).toEqual(Array.from({ length: 120 }, (_, i) => i));
  });

  it('a publish through one connection to the bus files wakes a consumer on another at once when they share a wake channel', async () => {
    // A second store over the same files stands for another thread's connection (the single-process gateway's
    // billing worker): only the channel can wake its consumer, whose poll would not come for ten minutes.
    const otherStore = createStore({ engine: 'embedded', dataDir });
    const channel = `gw-bus-test:${dataDir}`;
    const topic = uniqueName('cross');
    try {
      const poll = { pollMs: 600_000 };
      const publisher = bus({ ...poll, wakeChannel: channel });
      const consumerBus = createEmbeddedBus({ store: otherStore, logger: testLogger(), ...poll, wakeChannel: channel });
      buses.push(consumerBus);
      const { received } = await consume(consumerBus, topic, uniqueName('g'));
      for (const n of [1, 2, 3]) {
        await publisher.publish(topic, numbers(n, 1));
        await waitFor(`message ${n} on the other connection`, () => received.length === n, 3_000);
      }
      expect(received.map((m) => m.value)).toEqual([1, 2, 3]);
    } finally {
      await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
      await Promise.all(buses.splice(0).map((b) => b.close()));
      await otherStore.close();
    }
  });

  it('takes over topics a data dir of the earlier layout kept as documents: unconsumed entries are delivered, numbering goes on', async () => {
    const topic = uniqueName('upgrade');
    const group = uniqueName('g');
    // The earlier layout, as that version wrote it: marks and entries as documents, a group part-way through.
    const earlier = new DocumentLogs(store, DOCUMENT_TOPICS_COLLECTION, DOCUMENT_LOG_PREFIX);
    await earlier.append(topic, numbers(1, 5).map((m) => ({ key: m.key, value: JSON.stringify(m.value) })), Date.now());
    await store.collection<GroupDoc>(GROUPS_COLLECTION).insertOne({ _id: groupDocId(group, topic), group, topic, offset: 2, owner: null, leaseUntil: 0 });

    const b = bus();
    const { received } = await consume(b, topic, group);
    await waitFor('the three it had not committed', () => received.length >= 3);
    await b.publish(topic, numbers(6, 1));
    await waitFor('the next one', () => received.length >= 4);
    expect(received.map((m) => [m.offset, m.value])).toEqual([['3', 3], ['4', 4], ['5', 5], ['6', 6]]);
    expect(await store.logs!.mark(topic)).toEqual({ seq: 6, trimmedThrough: 0 });
  });

  it('refuses topic names Kafka would refuse', async () => {
    await expect(bus().publish('bad topic!', [{ key: 'k', value: 1 }])).rejects.toThrow(/invalid topic name/);
  });
});

async function waitForAsync(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
