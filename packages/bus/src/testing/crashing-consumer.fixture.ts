/**
 * Child process for the crash test: joins a group, reports the first batch to the parent over IPC, and
 * then hangs inside the handler until the parent SIGKILLs it, so the batch is never committed.
 * argv[2]: JSON { endpoint: BusEndpoint, topic, group, sessionTimeoutMs? } (Kafka: how long the dead member holds the group).
 */
import type { BusEndpoint } from './engines';
import { busOn, openStore, testLogger } from './engines';

async function main(): Promise<void> {
  const { endpoint, topic, group, sessionTimeoutMs } = JSON.parse(process.argv[2]) as { endpoint: BusEndpoint; topic: string; group: string; sessionTimeoutMs?: number };
  const store = endpoint.engine === 'embedded' ? await openStore(endpoint.dataDir) : null;
  const bus = busOn(endpoint, store, testLogger(), sessionTimeoutMs);
  await bus.subscribe({
    topics: [topic],
    group,
    handleBatch: async (messages) => {
      process.send?.({ type: 'received', values: messages.map((m) => m.value) });
      await new Promise(() => undefined);
    },
  });
  process.send?.({ type: 'subscribed' });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
