// jest globalTeardown: stops only what engines-setup.js started. Containers are stopped; local engines
// are released (scripts/engines.sh stops them only if a test run started them and no other run still
// holds a lease); engines given through MONGO_URL / KAFKA_BROKERS are left alone.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const ENGINES_SH = path.resolve(__dirname, '../engines.sh');

module.exports = async () => {
  const record = globalThis.__GW_ENGINES__;
  if (!record) return;
  globalThis.__GW_ENGINES__ = undefined;
  await Promise.all(record.containers.map((c) => c.stop().catch((err) => process.stderr.write(`[engines] stopping a container: ${err}\n`))));
  if (record.leasedPid !== undefined) {
    const r = spawnSync('bash', [ENGINES_SH, 'release', String(record.leasedPid)], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) process.stderr.write(`[engines] scripts/engines.sh release exited ${r.status}\n`);
  }
};
