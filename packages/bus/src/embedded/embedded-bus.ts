import { randomUUID } from 'node:crypto';
import type { Logger } from '@gw/platform';
import type { Store } from '@gw/store';
import type { Bus, BusMessage, OutgoingMessage, SubscribeOptions, Subscription } from '../port';
import { KeyedQueue } from '../internal/async';
import { groupDocId, type GroupDoc } from './docs';
import { GroupLease } from './group-lease';
import { assertTopicName, GROUPS_COLLECTION } from './names';
import { TopicConsumer, type TopicConsumerTimings } from './topic-consumer';
import { TopicLogs, type Retention } from './topic-log';
import { closeTopicEvents, topicEvents } from './wakeups';

export interface EmbeddedBusOptions {
  store: Store;
  logger: Logger;
  /** How long a member's claim on a group outlives it: a crashed member's messages move on after this. */
  leaseMs?: number;
  pollMs?: number;
  gapGraceMs?: number;
  /** How long a handled offset may wait to be committed (default 100 ms; 0 = after every batch). */
  commitIntervalMs?: number;
  /**
   * How often entries every group has committed (or past the retention) are deleted, on every topic of the
   * store, whoever publishes or consumes it; 0 disables trimming. Buses that share a store (threads of one
   * process) need only one trimmer: the others pass 0.
   */
  trimIntervalMs?: number;
  /** Entries older than this are deleted even if a group has not committed them; default 7 days, 0 = no bound. */
  retentionMs?: number;
  /** At most this many entries are kept per topic, committed or not; default 1,000,000, 0 = no bound. */
  retentionEntries?: number;
  /** An ephemeral group whose member has been gone this long is deleted by the trim; default 10 minutes. */
  ephemeralGroupGraceMs?: number;
  /**
   * A name shared by every thread of this process that opens the same bus files: a publish in one thread then
   * wakes the consumers in the others at once, not at their next poll.
   */
  wakeChannel?: string;
}

const DEFAULT_MAX_BATCH = 500;

export function createEmbeddedBus(opts: EmbeddedBusOptions): Bus {
  const { store } = opts;
  const logger = opts.logger.child({ bus: 'embedded' });
  const timings: TopicConsumerTimings = {
    leaseMs: opts.leaseMs ?? 10_000,
    pollMs: opts.pollMs ?? 1_000,
    gapGraceMs: opts.gapGraceMs ?? 10_000,
    commitIntervalMs: opts.commitIntervalMs ?? 100,
  };
  const logs = new TopicLogs(store);
  const groups = store.collection<GroupDoc>(GROUPS_COLLECTION);
  const events = topicEvents(store, opts.wakeChannel);
  const subscriptions = new Set<Subscription>();
  let closed = false;

  const trimIntervalMs = opts.trimIntervalMs ?? 60_000;
  const retention: Retention = {
    maxAgeMs: opts.retentionMs ?? 7 * 24 * 3_600_000,
    maxEntries: opts.retentionEntries ?? 1_000_000,
    ephemeralGroupGraceMs: opts.ephemeralGroupGraceMs ?? 10 * 60_000,
  };
  const trimTimer = trimIntervalMs > 0 ? setInterval(() => void trimAll(), trimIntervalMs) : undefined;
  trimTimer?.unref();
  let trimRun: Promise<void> | null = null;
  function trimAll(): Promise<void> {
    trimRun ??= trimTopics().finally(() => (trimRun = null));
    return trimRun;
  }
  async function trimTopics(): Promise<void> {
    let topics: string[];
    try {
      topics = await logs.topicNames();
    } catch (err) {
      logger.warn({ err }, 'bus trim could not list the topics');
      return;
    }
    for (const topic of topics) {
      try {
        const deleted = await logs.trim(topic, retention);
        if (deleted > 0) logger.debug({ topic, deleted }, 'bus trimmed consumed entries');
      } catch (err) {
        logger.warn({ err, topic }, 'bus trim failed');
      }
    }
  }

  return {
    engine: 'embedded',

    async publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void> {
      if (closed) throw new Error('bus is closed');
      assertTopicName(topic);
      if (messages.length === 0) return;
      await logs.append(topic, messages);
      events.emit(topic);
    },

    async subscribe<T>(sub: SubscribeOptions<T>): Promise<Subscription> {
      if (closed) throw new Error('bus is closed');
      sub.topics.forEach(assertTopicName);
      const member = randomUUID();
      const log = logger.child({ group: sub.group, member });
      // One handler call at a time per subscription, as with one Kafka consumer.
      const handlerQueue = new KeyedQueue();
      const handle = (messages: BusMessage<T>[]) => handlerQueue.run('', () => sub.handleBatch(messages));
      const consumers: TopicConsumer<T>[] = [];
      for (const topic of sub.topics) {
        const lease = new GroupLease(groups, sub.group, topic, member, timings.leaseMs, sub.ephemeral ?? false);
        // The group's start is fixed here, so everything published after subscribe() resolves is seen.
        const initialOffset = sub.from === 'latest' ? ((await logs.meta(topic))?.seq ?? 0) : 0;
        await lease.ensure(initialOffset);
        const batching = { maxBatch: sub.maxBatch ?? DEFAULT_MAX_BATCH, maxBatchChars: sub.maxBatchBytes ?? Infinity, fetchWaitMs: sub.fetchWaitMs ?? 0 };
        consumers.push(new TopicConsumer(topic, logs, lease, events, handle, batching, timings, log.child({ topic })));
      }
      consumers.forEach((c) => c.start());

      let stopped: Promise<void> | undefined;
      const subscription: Subscription = {
        stop() {
          stopped ??= (async () => {
            subscriptions.delete(subscription);
            await Promise.all(consumers.map((c) => c.stop()));
          })();
          return stopped;
        },
      };
      subscriptions.add(subscription);
      return subscription;
    },

    ping: () => store.ping(),

    async consumerLag(group: string, topics: string[]): Promise<Record<string, number>> {
      const lag: Record<string, number> = {};
      for (const topic of topics) {
        const [meta, committed] = await Promise.all([logs.meta(topic), groups.findOne({ _id: groupDocId(group, topic) })]);
        if (committed) lag[topic] = Math.max(0, (meta?.seq ?? 0) - committed.offset);
      }
      return lag;
    },

    /** Stops this bus's consumers; the store belongs to the caller and stays open. */
    async close(): Promise<void> {
      closed = true;
      clearInterval(trimTimer);
      await trimRun;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      if (opts.wakeChannel) closeTopicEvents(store);
    },
  };
}
