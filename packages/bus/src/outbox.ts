import { randomUUID } from 'node:crypto';
import type { Logger } from '@gw/platform';
import type { Doc, Store } from '@gw/store';
import type { Bus, OutgoingMessage } from './port';
import { withTimeout } from './internal/async';

export const OUTBOX_COLLECTION = 'outbox';

interface OutboxDoc extends Doc {
  topic: string;
  /** JSON text of the OutgoingMessage[]: values keep any field names the store would refuse. */
  messages: string;
  createdAt: number;
  /** A relay working on this entry; others leave it alone until then (several instances on one store). */
  claimedUntil: number;
}

export interface OutboxOptions {
  bus: Bus;
  store: Store;
  logger: Logger;
  /** How often pending entries are retried. */
  relayIntervalMs?: number;
  /** A bus publish slower than this counts as failed and goes to the outbox (it may still land: at-least-once). */
  publishTimeoutMs?: number;
}

export interface Outbox {
  /** Hands messages to the bus, or persists them for the relay when the bus fails; throws only if both fail. */
  publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void>;
  /** Relays what is pending now; resolves when the outbox is empty or the bus failed again. */
  relay(): Promise<void>;
  /** Number of pending entries (each holds one publish call's messages). */
  pending(): Promise<number>;
  close(): Promise<void>;
}

const RELAY_PAGE = 100;

/**
 * Events the bus could not take wait in a durable collection and are relayed in insertion order. While
 * anything waits, new events queue behind it rather than overtake it, so per-key order survives an outage.
 * A crash between a relayed publish and its delete sends that entry twice: consumers are idempotent.
 */
export function createOutbox(opts: OutboxOptions): Outbox {
  const { bus } = opts;
  const logger = opts.logger.child({ component: 'outbox' });
  const entries = opts.store.collection<OutboxDoc>(OUTBOX_COLLECTION);
  const publishTimeoutMs = opts.publishTimeoutMs ?? 5_000;
  const claimMs = Math.max(30_000, publishTimeoutMs * 2);
  const relayIntervalMs = opts.relayIntervalMs ?? 1_000;

  let writes = 0;
  let backlog: boolean | undefined;
  const backlogKnown = entries.count({}).then(
    (n) => void (backlog ??= n > 0),
    () => void (backlog ??= true),
  );
  let closed = false;
  let relaying: Promise<void> | null = null;
  let lastId = '';
  let counter = 0;

  // Sortable by creation: time, then a per-process counter; the random tail keeps processes apart.
  function nextId(): string {
    const id = `${String(Date.now()).padStart(15, '0')}-${String(counter++ % 1e9).padStart(9, '0')}-${randomUUID().slice(0, 8)}`;
    lastId = id > lastId ? id : `${lastId}+`;
    return lastId;
  }

  async function persist<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void> {
    writes++;
    backlog = true;
    await entries.insertOne({ _id: nextId(), topic, messages: JSON.stringify(messages), createdAt: Date.now(), claimedUntil: 0 });
  }

  async function relayOnce(): Promise<void> {
    const writesBefore = writes;
    const page = await entries.find({}, { sort: { _id: 1 }, limit: RELAY_PAGE });
    for (const entry of page) {
      if (closed) return;
      const now = Date.now();
      const claimed = await entries.findOneAndUpdate(
        { _id: entry._id, claimedUntil: { $lt: now } },
        { $set: { claimedUntil: now + claimMs } },
      );
      // Another relay has it: stop here rather than overtake it.
      if (!claimed) return;
      try {
        await withTimeout(bus.publish(entry.topic, JSON.parse(entry.messages) as OutgoingMessage[]), publishTimeoutMs, 'bus publish timed out');
      } catch (err) {
        await entries.updateOne({ _id: entry._id }, { $set: { claimedUntil: 0 } }).catch(() => undefined);
        logger.warn({ err, pendingFrom: entry._id }, 'outbox relay: bus still unavailable');
        return;
      }
      await entries.deleteOne({ _id: entry._id });
    }
    if (page.length === RELAY_PAGE) return relayOnce();
    // Only when nothing was written meanwhile is the outbox known to be empty.
    if (writes === writesBefore) backlog = false;
  }

  function relay(): Promise<void> {
    relaying ??= relayOnce()
      .catch((err) => logger.warn({ err }, 'outbox relay failed'))
      .finally(() => (relaying = null));
    return relaying;
  }

  const timer = setInterval(() => void relay(), relayIntervalMs);
  timer.unref();

  return {
    async publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void> {
      if (closed) throw new Error('outbox is closed');
      if (messages.length === 0) return;
      await backlogKnown;
      if (backlog) {
        await persist(topic, messages);
        void relay();
        return;
      }
      try {
        await withTimeout(bus.publish(topic, messages), publishTimeoutMs, 'bus publish timed out');
      } catch (err) {
        logger.warn({ err, topic, count: messages.length }, 'bus unavailable; events kept in the outbox');
        await persist(topic, messages);
      }
    },
    relay,
    pending: () => entries.count({}),
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      await relaying;
    },
  };
}
