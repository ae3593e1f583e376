import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBatchingPublisher, createBus, createOutbox, type BatchingPublisher, type Bus, type Outbox, type Subscription } from '@gw/bus';
import { createLogger, newRequestId } from '@gw/platform';
import { TOPICS, type UsageEvent } from '@gw/proto';
import { createStore, type Store } from '@gw/store';
import { OPEN_CALLS_COLLECTION, OpenCallJournal, type MeasuredUsage, type OpenCallDoc, type OpenCallStart } from './open-call-journal';

const silentLogger = () => createLogger('open-call-test', process.env.TEST_LOG_LEVEL ?? 'silent');
/** The embedded engine always; the MongoDB-wire server too when the jest setup exported `MONGO_URL`. */
const STORE_ENGINES: Array<'embedded' | 'mongo'> = process.env.MONGO_URL ? ['embedded', 'mongo'] : ['embedded'];

interface TestStore {
  store: Store;
  dispose(): Promise<void>;
}

async function openTestStore(engine: 'embedded' | 'mongo'): Promise<TestStore> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-open-calls-'));
  let store: Store;
  if (engine === 'mongo') {
    const url = new URL(process.env.MONGO_URL!);
    url.pathname = `/open_calls_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    store = createStore({ engine: 'mongo', url: url.toString() });
  } else {
    store = createStore({ engine: 'embedded', dataDir: dir });
  }
  return { store, dispose: async () => { await store.close(); await rm(dir, { recursive: true, force: true }); } };
}

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not met in time');
}

const LEASE_MS = 10_000;
const CHECKPOINT_MS = 1_000;

describe.each(STORE_ENGINES)('open-call journal and its recovery sweeper (%s store)', (engine) => {
  let t: TestStore;
  let bus: Bus;
  let outbox: Outbox;
  let publisher: BatchingPublisher;
  let subscription: Subscription;
  let clock: number;
  const published: UsageEvent[] = [];
  const journals: OpenCallJournal[] = [];

  /** One service instance's journal; all of them share the store, the outbox and the clock. */
  const instance = (name: string) => {
    const j = new OpenCallJournal({
      store: t.store, publisher, logger: silentLogger(), serviceName: 'test', leaseMs: LEASE_MS, checkpointMs: CHECKPOINT_MS, sweepMs: 60_000,
      instanceId: name, now: () => clock,
    });
    journals.push(j);
    return j;
  };
  const stream = (overrides: Partial<OpenCallStart> = {}): OpenCallStart => ({
    requestId: newRequestId(), traceId: '4bf92f3577b34da6a3ce929d0e0e4736', hold: { holdId: 'grant-journal', micros: 7, grant: true }, accountId: 'acct_j', keyHash: 'ab'.repeat(32), model: 'test/chat', apiType: 'chat', startedAt: clock,
    promptChars: 40, ...overrides,
  });
  /** A stream whose request went to deployment `dep-1`. */
  const sent = async (j: OpenCallJournal, overrides: Partial<OpenCallStart> = {}) => {
    const call = j.begin(stream(overrides));
    await call.sendingTo('sim', 'dep-1');
    return call;
  };
  const entries = () => t.store.collection<OpenCallDoc>(OPEN_CALLS_COLLECTION).find({});

  beforeEach(async () => {
    t = await openTestStore(engine);
    clock = Date.now();
    published.length = 0;
    bus = createBus({ engine: 'embedded', store: t.store, pollMs: 20 }, silentLogger());
    outbox = createOutbox({ bus, store: t.store, logger: silentLogger() });
    publisher = createBatchingPublisher({ outbox, logger: silentLogger() });
    subscription = await bus.subscribe<UsageEvent>({
      topics: [TOPICS.usage], group: 'test-billing', handleBatch: async (batch) => { for (const m of batch) published.push(m.value); },
    });
    await instance('setup').ensureIndexes();
  });

  afterEach(async () => {
    await Promise.all(journals.splice(0).map((j) => j.stop()));
    await subscription.stop();
    await publisher.close();
    await outbox.close();
    await bus.close();
    await t.store.collection(OPEN_CALLS_COLLECTION).deleteMany({});
    await t.dispose();
  });

  it('bills a stream whose instance died with the usage of its last checkpoint, marked estimated, once', async () => {
    const dead = instance('dead');
    const call = await sent(dead, { promptChars: 40 });
    clock += CHECKPOINT_MS;
    call.noteOutput(80, { providerResponseId: 'chatcmpl-1', servedModel: 'sim-1' });
    await eventually(async () => (await entries())[0]?.output_chars === 80);
    // The instance dies here: no close, no lease renewal.
    const survivor = instance('survivor');
    expect(await survivor.recoverLapsed()).toBe(0);
    clock += LEASE_MS;
    expect(await survivor.recoverLapsed()).toBe(1);
    expect(await survivor.recoverLapsed()).toBe(0);
    await eventually(() => published.length === 1);
    expect(published[0]).toMatchObject({
      request_id: call.requestId, account_id: 'acct_j', key_hash: 'ab'.repeat(32), model: 'test/chat', provider: 'sim', deployment: 'dep-1',
      api_type: 'chat', provider_response_id: 'chatcmpl-1', served_model: 'sim-1', streamed: true, status: 'failed', usage_estimated: true, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
    });
    expect(await entries()).toEqual([]);
  });

  it('two sweepers racing for the same lapsed entries publish each one exactly once', async () => {
    const dead = instance('dead');
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push((await sent(dead)).requestId);
    clock += LEASE_MS + 1;
    const [a, b] = await Promise.all([instance('a').recoverLapsed(), instance('b').recoverLapsed()]);
    expect(a + b).toBe(12);
    await eventually(() => published.length >= 12);
    expect(published.map((e) => e.request_id).sort()).toEqual(ids.sort());
  });

  it('leaves the streams of a live instance alone: its lease renewal keeps them', async () => {
    const live = instance('live');
    await sent(live);
    clock += LEASE_MS - 1;
    await live.renewLeases();
    clock += LEASE_MS - 1;
    expect(await instance('other').recoverLapsed()).toBe(0);
    expect(await entries()).toHaveLength(1);
  });

  it('renews the lease of every stream it runs, and of no other instance\'s', async () => {
    const renewing = instance('renewing');
    const mine = [await sent(renewing), await sent(renewing)];
    const theirs = await sent(instance('silent'));
    clock += LEASE_MS - 1;
    await renewing.renewLeases();
    clock += 2;
    expect(await instance('sweeper').recoverLapsed()).toBe(1);
    await eventually(() => published.length === 1);
    expect(published[0].request_id).toBe(theirs.requestId);
    expect((await entries()).map((e) => e._id).sort()).toEqual(mine.map((c) => c.requestId).sort());
  });

  it('does not bill its own running stream whose renewal came late: its sweep renews it instead', async () => {
    const owner = instance('owner');
    const call = await sent(owner);
    clock += LEASE_MS + 1;
    expect(await owner.recoverLapsed()).toBe(0);
    expect(await entries()).toEqual([expect.objectContaining({ _id: call.requestId, owner: 'owner', lease_until_ms: clock + LEASE_MS })]);
    expect(await instance('other').recoverLapsed()).toBe(0);
  });

  it('a stream that ended normally leaves nothing to recover', async () => {
    const owner = instance('owner');
    const call = await sent(owner);
    call.close();
    await eventually(async () => (await entries()).length === 0);
    clock += LEASE_MS + 1;
    expect(await instance('other').recoverLapsed()).toBe(0);
  });

  it('follows a fallback to the deployment that served, and bills nothing for a call no deployment served', async () => {
    const owner = instance('owner');
    const fellBack = await sent(owner);
    await fellBack.sendingTo('sim-2', 'dep-2');
    expect(await entries()).toEqual([expect.objectContaining({ _id: fellBack.requestId, provider: 'sim-2', deployment: 'dep-2' })]);
    fellBack.discard();
    const unsent = owner.begin(stream());
    unsent.discard();
    await eventually(async () => (await entries()).length === 0);
    clock += LEASE_MS + 1;
    expect(await instance('other').recoverLapsed()).toBe(0);
  });

  it('writes a stream\'s progress at most once per checkpoint interval', async () => {
    const owner = instance('owner');
    const call = await sent(owner);
    const stored = async () => (await entries())[0].output_chars;
    for (let i = 0; i < 50; i++) call.noteOutput(1);
    clock += CHECKPOINT_MS;
    call.noteOutput(1);
    await eventually(async () => (await stored()) === 51);
    for (let i = 0; i < 50; i++) call.noteOutput(1);
    clock += CHECKPOINT_MS / 2;
    call.noteOutput(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(await stored()).toBe(51);
    clock += CHECKPOINT_MS / 2;
    call.noteOutput(1);
    await eventually(async () => (await stored()) === 103);
  });
  describe('a stream whose line measures its usage (media)', () => {
    const speech = (usage: MeasuredUsage) => stream({ apiType: 'speech', model: 'test/speech', promptChars: 400, usage });
    const seconds = (s: number) => ({ audio_duration_seconds: s }) as MeasuredUsage;

    it('is billed the usage of its last checkpoint as measured, with no token estimate', async () => {
      const dead = instance('dead');
      const call = dead.begin(speech(seconds(0)));
      await call.sendingTo('sim', 'dep-speech');
      clock += CHECKPOINT_MS;
      call.noteOutput(0, { providerResponseId: 'req_1', usage: seconds(2.5) });
      await eventually(async () => (await entries())[0]?.usage?.audio_duration_seconds === 2.5);
      clock += LEASE_MS + 1;
      expect(await instance('survivor').recoverLapsed()).toBe(1);
      await eventually(() => published.length === 1);
      expect(published[0]).toMatchObject({
        request_id: call.requestId, api_type: 'speech', deployment: 'dep-speech', provider_response_id: 'req_1', status: 'failed', usage_estimated: true, media_ids: [],
      });
      expect(published[0].usage).toEqual(expect.objectContaining({ audio_duration_seconds: 2.5 }));
      expect(published[0].usage?.prompt_tokens ?? 0).toBe(0);
    });

    it('dying before any progress bills its opening usage (a transcription: the audio it sent)', async () => {
      const dead = instance('dead');
      const call = dead.begin({ ...speech(seconds(7)), apiType: 'transcription' });
      await call.sendingTo('sim', 'dep-transcribe');
      clock += LEASE_MS + 1;
      expect(await instance('survivor').recoverLapsed()).toBe(1);
      await eventually(() => published.length === 1);
      expect(published[0]).toMatchObject({ request_id: call.requestId, api_type: 'transcription' });
      expect(published[0].usage).toEqual(expect.objectContaining({ audio_duration_seconds: 7 }));
      expect(published[0].usage?.prompt_tokens ?? 0).toBe(0);
    });

    it('writes each new produced item (an image record) at once, not at the next interval, and bills it with its id', async () => {
      const dead = instance('dead');
      const call = dead.begin({ ...speech({ generated_images: 0 } as MeasuredUsage), apiType: 'image' });
      await call.sendingTo('sim', 'dep-image');
      call.noteOutput(0, { usage: { generated_images: 1 } as MeasuredUsage, mediaIds: ['img_1'] });
      call.noteOutput(0, { usage: { generated_images: 2 } as MeasuredUsage, mediaIds: ['img_1', 'img_2'] });
      // No time passed: only new items are written this soon; partial progress without one waits for the interval.
      await eventually(async () => (await entries())[0]?.media_ids?.length === 2);
      call.noteOutput(0, { usage: { generated_images: 3 } as MeasuredUsage });
      await new Promise((r) => setTimeout(r, 100));
      expect((await entries())[0]).toMatchObject({ usage: { generated_images: 2 }, media_ids: ['img_1', 'img_2'] });
      clock += LEASE_MS + 1;
      expect(await instance('survivor').recoverLapsed()).toBe(1);
      await eventually(() => published.length === 1);
      expect(published[0]).toMatchObject({ request_id: call.requestId, api_type: 'image', media_ids: ['img_1', 'img_2'] });
      expect(published[0].usage).toEqual(expect.objectContaining({ generated_images: 2 }));
    });
  });
});
