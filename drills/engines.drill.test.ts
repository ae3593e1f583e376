import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { drillEngines } from './harness/engines';

jest.setTimeout(120_000);

/** The drills' premise: a crashed broker comes back on its own disk, with what was acknowledged before. */
describe('the drills\' broker', () => {
  test('killed with SIGKILL and restarted, still holds every message it acknowledged', async () => {
    const kafka = new Kafka({ clientId: 'drill-engines', brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 200 } });
    const topic = `drill-engines-${randomBytes(4).toString('hex')}`;
    const sent = Array.from({ length: 50 }, (_, i) => `message ${i}`);
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: sent.map((value) => ({ value })) });
    await producer.disconnect();

    drillEngines.kill('kafka');
    drillEngines.restartKafka();

    const consumer = kafka.consumer({ groupId: `${topic}-reader` });
    const seen: string[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${seen.length} of ${sent.length} messages back`)), 60_000);
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.push(message.value!.toString());
            if (seen.length === sent.length) { clearTimeout(timer); resolve(); }
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    expect(seen.sort()).toEqual([...sent].sort());
  });
});
