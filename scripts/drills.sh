#!/usr/bin/env bash
# The reliability drills alone (drills/): the multi-process stack on a Kafka and a MongoDB-wire server of
# their own, which the drills kill, restart and freeze. Arguments go to jest (a file name picks one drill).
# Each drill prints a line "DRILL <name> {figures}" and keeps them in .cache/drills/<name>.json.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
cd "$GW_ROOT"
mkdir -p .cache
# The hostile-traffic drill's fuzzer (schemathesis, pinned), into .cache/python-tools; offline once installed.
bash scripts/python-tools.sh
rm -f .cache/drills-results.json
pnpm exec jest -c drills/jest.config.js --json --outputFile=.cache/drills-results.json "$@"
