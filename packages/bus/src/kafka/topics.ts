import type { Admin } from 'kafkajs';

/** Errors a broker gives for a topic it has just created while the creation spreads to its metadata. */
const CREATION_PENDING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

export interface TopicRegistryOptions {
  partitions: number;
  /** How long a new topic may take to get a leader for every partition. */
  leaderWaitMs?: number;
  leaderPollMs?: number;
}

/**
 * Creates topics on first use with our partition count (broker auto-creation would pick its own), once per
 * topic per process; a failed attempt is forgotten so the next call tries again.
 */
export class TopicRegistry {
  private readonly known = new Map<string, Promise<void>>();
  private readonly leaderWaitMs: number;
  private readonly leaderPollMs: number;

  constructor(private readonly admin: () => Promise<Admin>, private readonly opts: TopicRegistryOptions) {
    this.leaderWaitMs = opts.leaderWaitMs ?? 10_000;
    this.leaderPollMs = opts.leaderPollMs ?? 100;
  }

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
    // Resolves false when the topic exists already (kafkajs also absorbs a concurrent creator's race). Its own
    // waitForLeaders (on unless turned off) is not used: it retries only LEADER_NOT_AVAILABLE, and a KRaft
    // broker answers the metadata request right after a creation with UNKNOWN_TOPIC_OR_PARTITION now and then.
    await admin.createTopics({ topics: [{ topic, numPartitions: this.opts.partitions }], waitForLeaders: false });
    await this.awaitLeaders(admin, topic);
  }

  private async awaitLeaders(admin: Admin, topic: string): Promise<void> {
    const deadline = Date.now() + this.leaderWaitMs;
    for (;;) {
      let waitingFor: unknown;
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        const partitions = topics.find((t) => t.name === topic)?.partitions ?? [];
        if (partitions.length > 0 && partitions.every((p) => p.leader >= 0)) return;
        waitingFor = new Error(`topic ${topic} has no leader for every partition yet`);
      } catch (err) {
        if (!CREATION_PENDING.has((err as { type?: string }).type ?? '')) throw err;
        waitingFor = err;
      }
      if (Date.now() >= deadline) {
        throw new Error(`topic ${topic} got no leaders within ${this.leaderWaitMs} ms`, { cause: waitingFor });
      }
      await new Promise((resolve) => setTimeout(resolve, this.leaderPollMs));
    }
  }
}
