import { Kafka, Partitioners, type Admin, type Producer } from 'kafkajs';
import type { Logger } from '@gw/platform';
import type { Bus, OutgoingMessage, SubscribeOptions, Subscription } from '../port';
import { withTimeout } from '../internal/async';
import { KAFKA_LOG_LEVEL, pinoLogCreator } from './kafka-log';
import { TopicRegistry } from './topics';
import { runSubscription } from './kafka-subscription';

const SUBSCRIBE_ATTEMPTS = 6;
/** With a fetch wait: the broker answers early only once this much gathered (a few hundred usage events). */
const FETCH_WAIT_MIN_BYTES = 256 * 1024;

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  /** Partitions of topics this bus creates. */
  partitions?: number;
  /** How long a silent consumer stays in its group; bounds how soon a dead member's partitions move. */
  sessionTimeoutMs?: number;
  /**
   * Longest a fetch waits on an idle broker. Stopping a consumer waits for its in-flight fetch, so this
   * bounds shutdown time; new messages end the wait at once either way.
   */
  maxFetchWaitMs?: number;
  /** Upper bound of `ping()`. */
  pingTimeoutMs?: number;
}

export function createKafkaBus(opts: KafkaBusOptions): Bus {
  const logger = opts.logger.child({ bus: 'kafka' });
  const sessionTimeout = opts.sessionTimeoutMs ?? 30_000;
  const pingTimeoutMs = opts.pingTimeoutMs ?? 2_000;
  const clientConfig = { brokers: opts.brokers, clientId: opts.clientId, logLevel: KAFKA_LOG_LEVEL, logCreator: pinoLogCreator(logger) };
  const kafka = new Kafka(clientConfig);
  // The admin client (ping, topic creation) gives up after ~2 s instead of ~10 s, so readiness answers
  // promptly and close() need not wait long for a connect attempt that is still retrying.
  const adminKafka = new Kafka({ ...clientConfig, retry: { retries: 3, initialRetryTime: 250, maxRetryTime: 1_000 } });

  const admin = lazyConnect(() => adminKafka.admin());
  const producer = lazyConnect(() =>
    kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // Java-compatible murmur2 on the key, so every client puts one key on one partition.
      createPartitioner: Partitioners.DefaultPartitioner,
    }),
  );
  const topics = new TopicRegistry(admin.get, { partitions: opts.partitions ?? 3 });
  const subscriptions = new Set<Subscription>();
  let closed = false;

  async function subscribeOnce<T>(sub: SubscribeOptions<T>): Promise<Subscription> {
    if (closed) throw new Error('bus is closed');
    await topics.ensure(sub.topics);
    const heartbeatInterval = Math.max(500, Math.floor(sessionTimeout / 6));
    const consumer = kafka.consumer({
      groupId: sub.group,
      sessionTimeout,
      heartbeatInterval,
      rebalanceTimeout: Math.max(sessionTimeout, 10_000),
      // With a fetch wait, the broker holds a fetch until enough bytes gathered or the wait ran out.
      ...(sub.fetchWaitMs ? { minBytes: FETCH_WAIT_MIN_BYTES, maxWaitTimeInMs: sub.fetchWaitMs } : { maxWaitTimeInMs: opts.maxFetchWaitMs ?? 1_000 }),
      allowAutoTopicCreation: false,
    });
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: sub.topics, fromBeginning: sub.from !== 'latest' });
      const running = await runSubscription(consumer, sub, heartbeatInterval, logger);
      const tracked: Subscription = {
        async stop() {
          subscriptions.delete(tracked);
          await running.stop();
        },
      };
      subscriptions.add(tracked);
      return tracked;
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  return {
    engine: 'kafka',

    async publish<T>(topic: string, messages: OutgoingMessage<T>[]): Promise<void> {
      if (closed) throw new Error('bus is closed');
      if (messages.length === 0) return;
      await topics.ensure([topic]);
      const p = await producer.get();
      await p.send({
        topic,
        acks: -1,
        messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value ?? null) })),
      });
    },

    async subscribe<T>(sub: SubscribeOptions<T>): Promise<Subscription> {
      // A fresh broker may still be electing leaders for new topics or the offsets topic; kafkajs marks
      // those failures retriable, and a service must not fail its start over them.
      for (let attempt = 1; ; attempt++) {
        try {
          return await subscribeOnce(sub);
        } catch (err) {
          if (closed || attempt >= SUBSCRIBE_ATTEMPTS || !isTransient(err)) throw err;
          logger.warn({ err: (err as Error).message, group: sub.group, attempt }, 'kafka subscribe failed; retrying');
          await new Promise((r) => setTimeout(r, 250 * attempt));
        }
      }
    },

    async ping(): Promise<boolean> {
      try {
        const a = await withTimeout(admin.get(), pingTimeoutMs, 'kafka admin connect timed out');
        await withTimeout(a.describeCluster(), pingTimeoutMs, 'kafka describeCluster timed out');
        return true;
      } catch (err) {
        logger.debug({ err }, 'kafka ping failed');
        return false;
      }
    },

    async consumerLag(group: string, topicNames: string[]): Promise<Record<string, number>> {
      const a = await admin.get();
      const committed = await a.fetchOffsets({ groupId: group, topics: topicNames });
      const lag: Record<string, number> = {};
      for (const { topic, partitions } of committed) {
        // -1: the group has committed nothing on the partition; a group with no commit anywhere has not started.
        if (partitions.every((p) => Number(p.offset) < 0)) continue;
        const ends = await a.fetchTopicOffsets(topic);
        lag[topic] = ends.reduce((sum, end) => {
          const at = Number(partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
          return sum + Math.max(0, Number(end.high) - (at < 0 ? Number(end.low) : at));
        }, 0);
      }
      return lag;
    },

    async close(): Promise<void> {
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      await Promise.all([producer.close(), admin.close()]);
    },
  };
}

/** Connects a kafkajs client on first use; a failed connect is forgotten so the next call retries. */
function lazyConnect<C extends Admin | Producer>(make: () => C) {
  let client: C | undefined;
  let connecting: Promise<C> | undefined;
  return {
    get: (): Promise<C> => {
      connecting ??= (async () => {
        client ??= make();
        await client.connect();
        return client;
      })().catch((err) => {
        connecting = undefined;
        throw err;
      });
      return connecting;
    },
    close: async (): Promise<void> => {
      const c = client;
      // kafkajs cannot abort a connect that is retrying; let it settle so no retry timer outlives us.
      await connecting?.catch(() => undefined);
      connecting = undefined;
      client = undefined;
      await c?.disconnect().catch(() => undefined);
    },
  };
}

/** kafkajs marks broker-side transient failures retriable, also when they come wrapped after its own retries. */
function isTransient(err: unknown): boolean {
  const e = err as { retriable?: boolean; name?: string; cause?: { retriable?: boolean } };
  return e.retriable === true || e.cause?.retriable === true || e.name === 'KafkaJSNumberOfRetriesExceeded';
}
