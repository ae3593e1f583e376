#!/usr/bin/env bash
# Installs what is missing and runs the whole gateway on this machine with the embedded engines: compiled to
# JavaScript first (scripts/build-gateway.sh, again only after a change), then run with plain node.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
source "$(dirname "${BASH_SOURCE[0]}")/system-packages.sh"
cd "$GW_ROOT"
pnpm install --frozen-lockfile --reporter=silent
bash scripts/build-gateway.sh
# The data stays in the checkout's data/, not inside the build.
export DATA_DIR="${DATA_DIR:-$GW_ROOT/data}"
exec node --enable-source-maps .cache/gateway/main.js "$@"
