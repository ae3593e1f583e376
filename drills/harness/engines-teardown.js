// jest globalTeardown for the drills: their engines stop with them (a thawed Mongo first: a stopped process
// ignores SIGTERM until it runs again).
const { runDrillEngines } = require('./drill-engines-sh');

module.exports = async () => {
  try { runDrillEngines('thaw', 'mongo'); } catch { /* not frozen or not running */ }
  try { runDrillEngines('thaw', 'kafka'); } catch { /* not frozen or not running */ }
  runDrillEngines('stop');
};
