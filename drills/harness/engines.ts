// The drills' engines as faults: crash, restart on the same data, freeze and thaw (scripts/engines.sh).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runDrillEngines, runDrillEnginesInBackground } = require('./drill-engines-sh') as {
  runDrillEngines: (...args: string[]) => string;
  runDrillEnginesInBackground: (...args: string[]) => Promise<string>;
};

export type Engine = 'kafka' | 'mongo';

export const drillEngines = {
  /** SIGKILL: the engine is gone at once, as in a crash. */
  kill: (engine: Engine) => { runDrillEngines('kill', engine); },
  /** Starts the broker again on the data its last run left (the Mongo-wire server keeps nothing: freeze it instead). */
  restartKafka: () => { runDrillEngines('start-keep-data'); },
  /** The same, while the test process goes on (a load running meanwhile keeps running). */
  restartKafkaInBackground: async () => { await runDrillEnginesInBackground('start-keep-data'); },
  /** SIGSTOP: the port stays open, nothing answers: a hung engine. */
  freeze: (engine: Engine) => { runDrillEngines('freeze', engine); },
  thaw: (engine: Engine) => { runDrillEngines('thaw', engine); },
};
