import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { Logger } from '@gw/platform';
import type { BusMessage, SubscribeOptions, Subscription } from '../port';
import { Backoff, chunkWithin, sleep, withTimeout } from '../internal/async';

export const DEFAULT_MAX_BATCH = 500;

/**
 * Runs `opts.handleBatch` on a connected, subscribed consumer. Offsets are resolved and committed only after
 * the handler resolves; on a throw nothing is resolved, so kafkajs fetches the same offsets again after our
 * back-off.
 */
export async function runSubscription<T>(
  consumer: Consumer,
  opts: SubscribeOptions<T>,
  heartbeatIntervalMs: number,
  logger: Logger,
): Promise<Subscription> {
  const log = logger.child({ group: opts.group, topics: opts.topics });
  const maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH;
  const backoff = new Backoff();
  const stopping = new AbortController();

  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) log.error({ err: payload.error }, 'bus consumer crashed and will not restart');
  });

  const eachBatch = async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }: EachBatchPayload) => {
    const { topic, partition } = batch;
    const sizes = new Map(batch.messages.map((m) => [m.offset, m.value?.length ?? 0]));
    const messages = batch.messages.flatMap((m) => decode<T>(topic, partition, m, log));
    for (const part of chunkWithin(messages, maxBatch, opts.maxBatchBytes ?? Infinity, (m) => sizes.get(m.offset) ?? 0)) {
      if (!isRunning() || isStale() || stopping.signal.aborted) return;
      // kafkajs heartbeats only between batches; a handler slower than the session timeout would otherwise
      // be dropped from the group and its batch handed to another member while it is still running.
      const keepAlive = setInterval(() => void heartbeat().catch(() => undefined), heartbeatIntervalMs);
      try {
        await opts.handleBatch(part);
      } catch (err) {
        const delay = backoff.next();
        log.warn({ err, topic, partition, offset: part[0].offset, retryInMs: delay }, 'bus handler failed; batch will be redelivered');
        await sleep(delay, stopping.signal);
        return;
      } finally {
        clearInterval(keepAlive);
      }
      backoff.reset();
      const last = part[part.length - 1].offset;
      resolveOffset(last);
      await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: (BigInt(last) + 1n).toString() }] }] });
      await heartbeat();
    }
    // Offsets of undecodable messages at the end of the batch still need resolving.
    const lastFetched = batch.messages[batch.messages.length - 1]?.offset;
    if (lastFetched !== undefined && (messages.length === 0 || messages[messages.length - 1].offset !== lastFetched)) {
      resolveOffset(lastFetched);
      await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: (BigInt(lastFetched) + 1n).toString() }] }] });
    }
  };

  const firstFetch = new Promise<void>((resolve) => {
    const off = consumer.on(consumer.events.FETCH, () => {
      off();
      resolve();
    });
  });
  // Resolves once this member has joined the group (kafkajs awaits join + sync before returning).
  await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 1, eachBatch });
  if (opts.from === 'latest') {
    // A new group's `latest` position is looked up on the first fetch; until then a publish could land
    // before it and be skipped, so subscribe() resolves only after it.
    await withTimeout(firstFetch, 15_000, 'first fetch').catch((err) => log.warn({ err }, 'bus consumer has not fetched yet'));
  }

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        stopping.abort();
        // disconnect() waits for the running eachBatch to return, then leaves the group.
        await consumer.disconnect();
      })();
      return stopped;
    },
  };
}

function decode<T>(topic: string, partition: number, m: KafkaMessage, log: Logger): BusMessage<T>[] {
  try {
    const value = JSON.parse(m.value?.toString('utf8') ?? 'null') as T;
    return [{ topic, partition, offset: m.offset, key: m.key?.toString('utf8') ?? '', value }];
  } catch (err) {
    // A foreign, non-JSON message would otherwise block its partition forever.
    log.error({ err, topic, partition, offset: m.offset }, 'bus message is not JSON; skipped');
    return [];
  }
}
