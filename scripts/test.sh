#!/usr/bin/env bash
# The whole test suite: installs what is missing (Node 24, pnpm, dependencies, the engine jars), type-checks,
# then runs unit and end-to-end tests, then the reliability drills (drills/, on engines of their own). Real Kafka and a MongoDB-wire server are used: from KAFKA_BROKERS /
# MONGO_URL when set, else started by the jest global setup (testcontainers with Docker, project scripts without).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
source "$(dirname "${BASH_SOURCE[0]}")/system-packages.sh"
cd "$GW_ROOT"
# Installing also builds the web console (services/console's postinstall: its static files, served by the stack).
pnpm install --frozen-lockfile --reporter=silent
pnpm run --silent typecheck
# helm, kubeconform and the Kubernetes schemas for the chart's tests (built once into .cache/deploy-tools).
bash scripts/deploy-tools.sh
mkdir -p .cache
status=0
pnpm exec jest --maxWorkers=2 --json --outputFile=.cache/jest-results.json "$@" || status=$?
# Arguments select tests of the main suite; the drills run on a whole-suite run only.
drills=0
if (($# == 0)); then bash scripts/drills.sh || drills=$?; fi
node -e '
  const fs = require("node:fs");
  for (const [name, file] of [["tests", ".cache/jest-results.json"], ["drills", ".cache/drills-results.json"]]) {
    if (!fs.existsSync(file)) continue;
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    console.log(`${name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
  }
' || true
((status == 0)) || exit $status
exit $drills
