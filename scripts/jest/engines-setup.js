// jest globalSetup: makes sure a MongoDB-wire server and Kafka are reachable and exports MONGO_URL and
// KAFKA_BROKERS (jest workers inherit process.env). In order of preference:
//   1. both variables already set: use them, start nothing;
//   2. a Docker engine answers: MongoDB 7 and Kafka containers through testcontainers;
//   3. otherwise: the project's own engines (scripts/engines.sh: real Kafka + mongo-java-server, Java only).
// What was started or leased here is recorded in globalThis.__GW_ENGINES__ for engines-teardown.js (jest runs
// globalSetup and globalTeardown in the same process).
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { readEngineEnv } = require('./engine-env');

const ROOT = path.resolve(__dirname, '../..');
const ENGINES_SH = path.join(ROOT, 'scripts/engines.sh');
const ENV_FILE = path.join(ROOT, '.cache/engines/env');
const KAFKA_IMAGE = 'apache/kafka:3.9.1';
const MONGO_IMAGE = 'mongo:7';

const say = (msg) => process.stderr.write(`[engines] ${msg}\n`);

async function dockerAvailable() {
  let tc;
  try {
    tc = require('testcontainers');
  } catch {
    return null; // not installed: no container path
  }
  try {
    await tc.getContainerRuntimeClient(); // rejects at once when there is no container runtime
    return tc;
  } catch {
    return null;
  }
}

async function startMongoContainer({ GenericContainer, Wait }) {
  // A standalone mongod: the code needs no transactions or change streams (see shared/ENGINES.md).
  const c = await new GenericContainer(MONGO_IMAGE)
    .withExposedPorts(27017)
    .withWaitStrategy(Wait.forLogMessage(/waiting for connections/i))
    .withStartupTimeout(120_000)
    .start();
  return { container: c, url: `mongodb://${c.getHost()}:${c.getMappedPort(27017)}/gateway` };
}

async function startKafkaContainer({ GenericContainer, Wait }) {
  // Clients must be told the host-side address (host:mappedPort), which is known only once the container
  // runs. So the container waits for a file holding the advertised listeners before starting Kafka
  // (the way testcontainers' own Kafka modules do it); BROKER is the in-container listener.
  const env = {
    CLUSTER_ID: 'MkU3OEVBNTcwNTJENDM2Qg',
    KAFKA_NODE_ID: '1',
    KAFKA_PROCESS_ROLES: 'broker,controller',
    KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9094',
    KAFKA_LISTENERS: 'PLAINTEXT://0.0.0.0:9092,BROKER://0.0.0.0:9093,CONTROLLER://0.0.0.0:9094',
    KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT',
    KAFKA_INTER_BROKER_LISTENER_NAME: 'BROKER',
    KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
    KAFKA_NUM_PARTITIONS: '3',
    KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
    KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
    KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '5',
    KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
    KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
    KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
  };
  const c = await new GenericContainer(KAFKA_IMAGE)
    .withEnvironment(env)
    .withExposedPorts(9092)
    .withCommand([
      'sh',
      '-c',
      'echo waiting-for-listeners; while [ ! -f /tmp/advertised ]; do sleep 0.1; done; ' +
        'export KAFKA_ADVERTISED_LISTENERS="$(cat /tmp/advertised)"; exec /etc/kafka/docker/run',
    ])
    .withWaitStrategy(Wait.forLogMessage('waiting-for-listeners'))
    .start();
  try {
    const brokers = `${c.getHost()}:${c.getMappedPort(9092)}`;
    // Write then rename, so the loop above never reads a half-written file.
    const adv = `PLAINTEXT://${brokers},BROKER://localhost:9093`;
    const r = await c.exec(['sh', '-c', `printf '%s' '${adv}' > /tmp/adv.tmp && mv /tmp/adv.tmp /tmp/advertised`]);
    if (r.exitCode !== 0) throw new Error(`could not hand the advertised listeners to Kafka: ${r.output}`);
    await waitForLog(c, 'Kafka Server started', 120_000);
    return { container: c, brokers };
  } catch (err) {
    await c.stop().catch(() => {});
    throw err;
  }
}

// Resolves once `text` appears in the container's log (which replays from the container's start).
async function waitForLog(container, text, timeoutMs) {
  const stream = await container.logs();
  await new Promise((resolve, reject) => {
    let tail = '';
    const timer = setTimeout(() => done(new Error(`Kafka container: no "${text}" after ${timeoutMs} ms:\n${tail}`)), timeoutMs);
    const done = (err) => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      stream.destroy?.();
      err ? reject(err) : resolve();
    };
    stream.on('data', (chunk) => {
      tail = (tail + chunk.toString()).slice(-4000);
      if (tail.includes(text)) done();
    });
    stream.on('error', done);
  });
}

function runEnginesSh(...args) {
  const r = spawnSync('bash', [ENGINES_SH, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`scripts/engines.sh ${args.join(' ')} failed (exit ${r.status}); see the messages above`);
  return r.stdout;
}

function readEnvFile() {
  return readEngineEnv(ENV_FILE);
}

module.exports = async () => {
  const record = { containers: [], leasedPid: undefined };
  globalThis.__GW_ENGINES__ = record;

  if (process.env.MONGO_URL && process.env.KAFKA_BROKERS) {
    say(`using MONGO_URL=${process.env.MONGO_URL} KAFKA_BROKERS=${process.env.KAFKA_BROKERS}`);
    return;
  }
  if (process.env.MONGO_URL || process.env.KAFKA_BROKERS) say('only one of MONGO_URL / KAFKA_BROKERS is set: starting both engines');

  const tc = await dockerAvailable();
  if (tc) {
    say(`Docker found: starting ${MONGO_IMAGE} and ${KAFKA_IMAGE} containers`);
    const [mongo, kafka] = await Promise.allSettled([startMongoContainer(tc), startKafkaContainer(tc)]);
    for (const r of [mongo, kafka]) if (r.status === 'fulfilled') record.containers.push(r.value.container);
    const failed = [mongo, kafka].find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(record.containers.map((c) => c.stop().catch(() => {})));
      record.containers = [];
      throw failed.reason;
    }
    process.env.MONGO_URL = mongo.value.url;
    process.env.KAFKA_BROKERS = kafka.value.brokers;
  } else {
    // A lease rather than a plain start: parallel test runs share the engines, the last one out stops
    // what a lease started, and engines started by hand are used but never stopped.
    say('no Docker: using the local engines of scripts/engines.sh (Java)');
    runEnginesSh('lease', String(process.pid));
    record.leasedPid = process.pid;
    Object.assign(process.env, readEnvFile());
  }
  say(`MONGO_URL=${process.env.MONGO_URL} KAFKA_BROKERS=${process.env.KAFKA_BROKERS}`);
};
