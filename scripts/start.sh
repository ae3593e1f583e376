#!/usr/bin/env bash
# Installs what is missing and runs the whole gateway on this machine with the embedded engines.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
source "$(dirname "${BASH_SOURCE[0]}")/system-packages.sh"
cd "$GW_ROOT"
pnpm install --frozen-lockfile --reporter=silent
exec pnpm --silent start
