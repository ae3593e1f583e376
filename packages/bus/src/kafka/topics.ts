import type { Admin } from 'kafkajs';

/**
 * Creates topics on first use with our partition count (broker auto-creation would pick its own), once per
 * topic per process; a failed attempt is forgotten so the next call tries again.
 */
export class TopicRegistry {
  private readonly known = new Map<string, Promise<void>>();

  constructor(private readonly admin: () => Promise<Admin>, private readonly partitions: number) {}

  ensure(topics: string[]): Promise<void> {
    return Promise.all(topics.map((t) => this.ensureOne(t))).then(() => undefined);
  }

  private ensureOne(topic: string): Promise<void> {
    let pending = this.known.get(topic);
    if (!pending) {
      pending = this.create(topic);
      this.known.set(topic, pending);
      pending.catch(() => this.known.delete(topic));
    }
    return pending;
  }

  private async create(topic: string): Promise<void> {
    const admin = await this.admin();
    // Resolves false when the topic exists already (kafkajs also absorbs a concurrent creator's race).
    await admin.createTopics({ topics: [{ topic, numPartitions: this.partitions }], waitForLeaders: true });
  }
}
