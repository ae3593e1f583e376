import type { Logger } from '@gw/platform';
import { Backoff, sleep } from './internal/async';
import type { SubscribeOptions, Subscription, TopicMap, TopicOf, TypedBus } from './port';

export interface BackgroundSubscription extends Subscription {
  /** True once the consumer has joined its group; until then the service runs degraded. */
  joined(): boolean;
  /** Resolves once joined, or once stopped before it could join. */
  whenJoined(): Promise<void>;
}

/**
 * Subscribes without holding up the caller: a service serves its API as soon as its store is reachable
 * while its consumers join (Kafka makes a restarted member wait out the dead one's session). A subscribe
 * that fails is logged and retried with back-off until it succeeds or the subscription is stopped.
 */
export function subscribeInBackground<M extends object = TopicMap, K extends TopicOf<M> = TopicOf<M>>(
  bus: TypedBus<M>, opts: SubscribeOptions<M[K], K>, logger: Logger, backoff = new Backoff(500, 10_000),
): BackgroundSubscription {
  const log = logger.child({ group: opts.group, topics: opts.topics });
  const stopping = new AbortController();
  let subscription: Subscription | null = null;

  const joining = (async () => {
    for (let attempt = 1; !stopping.signal.aborted; attempt++) {
      try {
        subscription = await bus.subscribe(opts);
        if (attempt > 1) log.info({ attempt }, 'bus consumer joined its group');
        return;
      } catch (err) {
        if (stopping.signal.aborted) return;
        const retryInMs = backoff.next();
        log.warn({ err: (err as Error).message, attempt, retryInMs }, 'bus consumer could not join its group; serving degraded, retrying');
        await sleep(retryInMs, stopping.signal);
      }
    }
  })();

  let stopped: Promise<void> | undefined;
  return {
    joined: () => subscription !== null,
    whenJoined: () => joining,
    stop() {
      stopped ??= (async () => {
        stopping.abort();
        // An attempt in flight may still succeed: its consumer must not outlive the stop.
        await joining;
        await subscription?.stop();
      })();
      return stopped;
    },
  };
}
