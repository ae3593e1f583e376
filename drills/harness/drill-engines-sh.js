// scripts/engines.sh for the drills' own engine pair (GW_ENGINES_NAME=drills, ports of their own).
// GW_DRILL_ENGINES_NAME names another pair, so two drill runs on one machine never kill each other's broker.
const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');
const { readEngineEnv } = require('../../scripts/jest/engine-env');

const ROOT = path.resolve(__dirname, '../..');
const ENGINES_SH = path.join(ROOT, 'scripts/engines.sh');
const NAME = process.env.GW_DRILL_ENGINES_NAME || 'drills';
const ENV_FILE = path.join(ROOT, `.cache/engines/env-${NAME}`);

function drillEnginesEnv(extra = {}) {
  return {
    ...process.env,
    GW_ENGINES_NAME: NAME,
    GW_KAFKA_PORT: process.env.GW_DRILL_KAFKA_PORT || '19192',
    GW_KAFKA_CONTROLLER_PORT: process.env.GW_DRILL_KAFKA_CONTROLLER_PORT || '19193',
    GW_MONGO_PORT: process.env.GW_DRILL_MONGO_PORT || '27118',
    ...extra,
  };
}

/** Runs `scripts/engines.sh <args>` on the drills' engines; throws with its messages when it fails. */
function runDrillEngines(...args) {
  const extra = args[0] === 'start-keep-data' ? { GW_KAFKA_KEEP_DATA: '1' } : {};
  const command = args[0] === 'start-keep-data' ? ['start', ...args.slice(1)] : args;
  const r = spawnSync('bash', [ENGINES_SH, ...command], { cwd: ROOT, env: drillEnginesEnv(extra), encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`scripts/engines.sh ${command.join(' ')} (drills) failed (exit ${r.status}):\n${r.stderr}`);
  return r.stderr;
}

/**
 * The same without blocking the event loop (a broker's start takes seconds, during which a drill's load
 * must keep going and its calls' durations must not include a frozen test process).
 */
function runDrillEnginesInBackground(...args) {
  const extra = args[0] === 'start-keep-data' ? { GW_KAFKA_KEEP_DATA: '1' } : {};
  const command = args[0] === 'start-keep-data' ? ['start', ...args.slice(1)] : args;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [ENGINES_SH, ...command], { cwd: ROOT, env: drillEnginesEnv(extra), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(stderr);
      else reject(new Error(`scripts/engines.sh ${command.join(' ')} (drills) failed (exit ${code}):\n${stderr}`));
    });
  });
}

function readDrillEnv() {
  return readEngineEnv(ENV_FILE);
}

module.exports = { runDrillEngines, runDrillEnginesInBackground, readDrillEnv };
