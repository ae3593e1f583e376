import type { TypedBus } from '@gw/bus';
import { TOPICS, type KeyChanged, type TopicMessages } from '@gw/proto';
import { Engines, eventually } from './test-harness';

// The topic -> message map is checked by the compiler (`pnpm typecheck` fails when an expected error is gone).
describe('gateway topics are typed once', () => {
  let engines: Engines;
  beforeEach(async () => { engines = await Engines.open(); });
  afterEach(() => engines.close());

  test('a topic takes and yields only its own message type', async () => {
    const bus: TypedBus<TopicMessages> = engines.bus;
    const seen: KeyChanged[] = [];
    const sub = await bus.subscribe({
      topics: [TOPICS.keys], group: `topics-${Date.now()}`,
      handleBatch: async (messages) => { seen.push(...messages.map((m) => m.value)); },
    });
    try {
      const change: KeyChanged = { key_hash: 'ab'.repeat(32), change: 'deleted' };
      await bus.publish(TOPICS.keys, [{ key: change.key_hash, value: change }]);
      // Never called: it exists for the compiler, which must refuse both lines.
      const refusedByTheCompiler = () => [
        // @ts-expect-error a key change is not a usage event
        bus.publish(TOPICS.usage, [{ key: change.key_hash, value: change }]),
        // @ts-expect-error a topic outside the map does not exist
        bus.publish('gateway.usage', [{ key: 'k', value: change }]),
      ];
      expect(refusedByTheCompiler).toBeInstanceOf(Function);
      await eventually('the key change to arrive', () => seen.length === 1);
      expect(seen).toEqual([change]);
    } finally {
      await sub.stop();
    }
  });
});
