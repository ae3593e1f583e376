import { createBatchingPublisher, createBus, createOutbox, type BatchingPublisher, type Bus, type Outbox } from '@gw/bus';
import type { Deployment } from '@gw/catalog';
import { newRequestId } from '@gw/platform';
import { openTestStore, silentLogger, type TestStore } from '../async-chat/chat-job-test-support';
import { OpenCallJournal } from '@gw/billed-call';
import { UsageRecorder, type CallRecord } from './usage-recorder';

describe('UsageRecorder', () => {
  let t: TestStore;
  let bus: Bus;
  let outbox: Outbox;
  let publisher: BatchingPublisher;

  beforeEach(async () => {
    t = await openTestStore('embedded');
    bus = createBus({ engine: 'embedded', store: t.store, pollMs: 20 }, silentLogger());
    outbox = createOutbox({ bus, store: t.store, logger: silentLogger() });
    // A linger far longer than any test: only an explicit flush sends the event.
    publisher = createBatchingPublisher({ outbox, logger: silentLogger(), lingerMs: 60_000 });
  });

  afterEach(async () => {
    await publisher.close();
    await outbox.close();
    await bus.close();
    await t.dispose();
  });

  const call = (): CallRecord => ({
    requestId: newRequestId(), hold: { holdId: 'h', micros: 1, grant: false }, accountId: 'acct_u', keyHash: 'ab'.repeat(32), model: 'test/chat',
    providerName: 'sim', deployment: { id: 'dep-1' } as Deployment, apiType: 'chat', providerResponseId: 'r', servedModel: 's', streamed: false,
    cancelled: false, failed: false, finishReason: 'stop', usage: { prompt_tokens: 3, completion_tokens: 4 }, startedAt: Date.now(), firstByteAt: Date.now(), traceId: 't',
  });

  it('resolves once the usage event has left the process\'s memory for the outbox, not after the publisher\'s linger', async () => {
    const journal = new OpenCallJournal({ store: t.store, publisher, logger: silentLogger(), serviceName: 'inference', leaseMs: 10_000, checkpointMs: 1_000, sweepMs: 60_000 });
    const recorder = new UsageRecorder(publisher, journal);
    const started = Date.now();
    const recording = recorder.record(call());
    // Taken at once (the answer is not delayed by a full batch), held only until the outbox has it.
    expect(publisher.size).toBe(1);
    await recording;
    expect(publisher.size).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
