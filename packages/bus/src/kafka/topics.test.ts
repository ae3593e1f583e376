import type { Admin } from 'kafkajs';
import { TopicRegistry } from './topics';

/**
 * A broker's admin API as far as topic creation goes: metadata answers scripted one call at a time. Like
 * kafkajs, createTopics waits for leaders itself unless told not to, retrying only LEADER_NOT_AVAILABLE.
 */
function scriptedAdmin(metadataAnswers: Array<Error | number[]>) {
  const calls = { create: 0, metadata: 0 };
  const fetchTopicMetadata = async ({ topics }: { topics: string[] }) => {
    const answer = metadataAnswers[Math.min(calls.metadata, metadataAnswers.length - 1)];
    calls.metadata += 1;
    if (answer instanceof Error) throw answer;
    return { topics: [{ name: topics[0], partitions: answer.map((leader, partitionId) => ({ partitionId, leader })) }] };
  };
  const admin = {
    createTopics: async ({ topics, waitForLeaders = true }: { topics: { topic: string }[]; waitForLeaders?: boolean }) => {
      calls.create += 1;
      for (;;) {
        if (!waitForLeaders) return true;
        try {
          await fetchTopicMetadata({ topics: topics.map((t) => t.topic) });
          return true;
        } catch (err) {
          if ((err as { type?: string }).type !== 'LEADER_NOT_AVAILABLE') throw err;
        }
      }
    },
    fetchTopicMetadata,
  } as unknown as Admin;
  return { admin, calls };
}

function kafkaError(type: string): Error {
  return Object.assign(new Error(`broker said ${type}`), { type });
}

describe('TopicRegistry', () => {
  it.each([
    ['the topic is unknown to the metadata for a moment', [kafkaError('UNKNOWN_TOPIC_OR_PARTITION'), [0, 0, 0]]],
    ['a leader is not elected yet', [kafkaError('LEADER_NOT_AVAILABLE'), [0, -1, 0], [0, 0, 0]]],
  ])('waits while %s, then resolves once every partition has a leader', async (_name, answers) => {
    const { admin, calls } = scriptedAdmin(answers);
    const registry = new TopicRegistry(async () => admin, { partitions: 3, leaderPollMs: 1 });
    await registry.ensure(['usage']);
    expect(calls.metadata).toBe(answers.length);
    await registry.ensure(['usage']);
    expect(calls.create).toBe(1);
  });

  it('fails at once on any other broker error, and tries again on the next call', async () => {
    const { admin, calls } = scriptedAdmin([kafkaError('TOPIC_AUTHORIZATION_FAILED'), [0]]);
    const registry = new TopicRegistry(async () => admin, { partitions: 1, leaderPollMs: 1 });
    await expect(registry.ensure(['usage'])).rejects.toThrow('TOPIC_AUTHORIZATION_FAILED');
    expect(calls.metadata).toBe(1);
    await registry.ensure(['usage']);
    expect(calls.create).toBe(2);
  });

  it('gives up after its wait when no leader ever comes', async () => {
    const { admin } = scriptedAdmin([kafkaError('UNKNOWN_TOPIC_OR_PARTITION')]);
    const registry = new TopicRegistry(async () => admin, { partitions: 1, leaderWaitMs: 30, leaderPollMs: 5 });
    await expect(registry.ensure(['usage'])).rejects.toThrow('got no leaders within 30 ms');
  });
});
