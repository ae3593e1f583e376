/** Kafka's rule for topic names; the embedded engine enforces it too so a topic works on both engines. */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;

export function assertTopicName(topic: string): void {
  if (!TOPIC_NAME.test(topic)) throw new Error(`invalid topic name "${topic}" (allowed: [A-Za-z0-9._-], 1-249 chars)`);
}

/** One log collection per topic keeps each consumer's range scan to its own topic. */
export function logCollectionName(topic: string): string {
  return `bus_log.${topic}`;
}

/** Per-topic sequence counter and trim mark. */
export const TOPICS_COLLECTION = 'bus_topics';
/** Per group+topic: committed offset and the consuming member's lease, in one doc so a commit can be guarded by the lease. */
export const GROUPS_COLLECTION = 'bus_groups';
