// The reliability drills (issue #12): faults, replicas and hostile traffic against the multi-process stack.
// Their own engines (scripts/engines.sh with GW_ENGINES_NAME=drills), since drills kill and freeze them;
// one file at a time, since each drill loads the machine and measures what it sees.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2023', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] };
module.exports = {
  rootDir: '..',
  displayName: 'drills',
  testEnvironment: 'node',
  transform,
  roots: ['<rootDir>/drills'],
  testMatch: ['**/*.drill.test.ts'],
  maxWorkers: 1,
  globalSetup: '<rootDir>/drills/harness/engines-setup.js',
  globalTeardown: '<rootDir>/drills/harness/engines-teardown.js',
};
