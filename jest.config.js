// Two projects: unit tests live next to the code; e2e tests drive the whole stack through the edge.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2023', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }] };
module.exports = {
  // Hooks start real services and engines; on a loaded 2-core runner that can pass jest's 5 s default.
  testTimeout: 30_000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/packages', '<rootDir>/services'],
      testMatch: ['**/src/**/*.test.ts'],
      globalSetup: '<rootDir>/scripts/jest/engines-setup.js',
      globalTeardown: '<rootDir>/scripts/jest/engines-teardown.js',
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/test-e2e'],
      testMatch: ['**/*.test.ts'],
      globalSetup: '<rootDir>/scripts/jest/engines-setup.js',
      globalTeardown: '<rootDir>/scripts/jest/engines-teardown.js',
    },
  ],
};
