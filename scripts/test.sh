#!/usr/bin/env bash
# The whole test suite: installs what is missing (Node 24, pnpm, dependencies, the engine jars), type-checks,
# then runs unit and end-to-end tests. Real Kafka and a MongoDB-wire server are used: from KAFKA_BROKERS /
# MONGO_URL when set, else started by the jest global setup (testcontainers with Docker, project scripts without).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
source "$(dirname "${BASH_SOURCE[0]}")/system-packages.sh"
cd "$GW_ROOT"
pnpm install --frozen-lockfile --reporter=silent
pnpm run --silent typecheck
mkdir -p .cache
status=0
pnpm exec jest --maxWorkers=2 --json --outputFile=.cache/jest-results.json "$@" || status=$?
node -e '
  const r = require("./.cache/jest-results.json");
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
' || true
exit $status
