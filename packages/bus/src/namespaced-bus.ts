import type { Bus, SubscribeOptions, Subscription } from './port';

/**
 * Several gateway deployments can share one Kafka cluster: every topic and consumer group of a deployment
 * is prefixed with its namespace, and handlers still see the logical topic names.
 */
export function namespacedBus(bus: Bus, namespace: string): Bus {
  if (!namespace) return bus;
  const prefix = `${namespace}.`;
  const physical = (topic: string) => `${prefix}${topic}`;
  const logical = (topic: string) => (topic.startsWith(prefix) ? topic.slice(prefix.length) : topic);
  return {
    engine: bus.engine,
    publish: (topic, messages) => bus.publish(physical(topic), messages),
    subscribe: <T>(opts: SubscribeOptions<T>): Promise<Subscription> => bus.subscribe<T>({
      ...opts,
      topics: opts.topics.map(physical),
      group: `${prefix}${opts.group}`,
      handleBatch: (messages) => opts.handleBatch(messages.map((m) => ({ ...m, topic: logical(m.topic) }))),
    }),
    ping: () => bus.ping(),
    ...(bus.consumerLag ? {
      consumerLag: async (group: string, topics: string[]) => Object.fromEntries(
        Object.entries(await bus.consumerLag!(`${prefix}${group}`, topics.map(physical))).map(([topic, n]) => [logical(topic), n])),
    } : {}),
    close: () => bus.close(),
  };
}
