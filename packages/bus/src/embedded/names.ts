/** Kafka's rule for topic names; the embedded engine enforces it too so a topic works on both engines. */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;

export function assertTopicName(topic: string): void {
  if (!TOPIC_NAME.test(topic)) throw new Error(`invalid topic name "${topic}" (allowed: [A-Za-z0-9._-], 1-249 chars)`);
}

/** Per group+topic: committed offset and the consuming member's lease, in one doc so a commit can be guarded by the lease. */
export const GROUPS_COLLECTION = 'bus_groups';

/**
 * Topics as documents, where the store keeps no append logs (MongoDB): per-topic marks, and a collection of
 * entries per topic. The embedded engine kept them so before it had log tables, and moves them on first use.
 */
export const DOCUMENT_TOPICS_COLLECTION = 'bus_topics';
export const DOCUMENT_LOG_PREFIX = 'bus_log.';
