// The env file scripts/engines.sh writes (export MONGO_URL=..., export KAFKA_BROKERS=...), as an object.
// Read by the jest setup of the main suite and by the drills' setup (their own engine pair, their own file).
const fs = require('node:fs');

function readEngineEnv(file) {
  const vars = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^export (\w+)=(.*)$/.exec(line.trim());
    if (m) vars[m[1]] = m[2];
  }
  if (!vars.MONGO_URL || !vars.KAFKA_BROKERS) throw new Error(`${file} lacks MONGO_URL or KAFKA_BROKERS`);
  return vars;
}

module.exports = { readEngineEnv };
