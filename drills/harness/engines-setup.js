// jest globalSetup for the drills: starts the drills' own Kafka and MongoDB-wire server (never the pair the
// other tests share: drills kill them) and exports MONGO_URL / KAFKA_BROKERS for the stacks they start.
// Ports: GW_DRILL_KAFKA_PORT (19192), GW_DRILL_KAFKA_CONTROLLER_PORT (19193), GW_DRILL_MONGO_PORT (27118);
// GW_DRILL_ENGINES_NAME (drills) names the pair.
const { runDrillEngines, readDrillEnv } = require('./drill-engines-sh');

module.exports = async () => {
  runDrillEngines('start');
  Object.assign(process.env, readDrillEnv());
  process.stderr.write(`[drills] MONGO_URL=${process.env.MONGO_URL} KAFKA_BROKERS=${process.env.KAFKA_BROKERS}\n`);
};
